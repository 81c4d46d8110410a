"""Running the `bundler` command in-process, with the real parser and every command registered.

`run_cli` goes through `bundler.cli.main`, so errors become what a user sees: exit code 2 or 1
and one line on stderr. `run_command` uses the same parser but lets a BundlerError through, for
tests that assert which error a command raises; `parse_args` only parses, for tests of what a
command makes of its flags.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import pytest

# Metrics and probes of an in-process manager or agent on free loopback ports, never the defaults
# (every interface, fixed ports).
LOOPBACK_ENDPOINTS = ("--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0")


class CliResult(NamedTuple):
    code: int
    stdout: str
    stderr: str


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> CliResult:
    """`bundler ARGV` as a user runs it: the exit code and what it printed."""
    # Imported on use: a conftest importing this module must not make every test of its folder
    # depend on every command module importing cleanly.
    from bundler.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return CliResult(code, out, err)


def parse_args(*argv: str) -> argparse.Namespace:
    """ARGV parsed as `bundler` parses it (the command's `run` not called)."""
    from bundler.cli import build_parser

    return build_parser().parse_args(list(argv))


def run_command(*argv: str) -> int:
    """Parse ARGV as `bundler` does and run the command; its errors propagate."""
    args = parse_args(*argv)
    code: int = args.run(args)
    return code


def output_field(stdout: str, name: str) -> str:
    """The value of the `NAME: value` line a command printed (`Digest`, `Pulled`, ...)."""
    for line in stdout.splitlines():
        if line.startswith(f"{name}: "):
            return line.split(": ", 1)[1]
    raise AssertionError(f"no {name!r} line in {stdout!r}")
