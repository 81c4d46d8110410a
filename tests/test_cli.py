"""The `bundler` command as a whole: help for every flag, the README listing them, quiet pipes."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.cli import build_parser

ROOT = Path(__file__).parents[1]
_README = (ROOT / "README.md").read_text(encoding="utf-8")
# Where the README lists the commands and flags (so `mypy --strict` earlier on does not count).
README = _README[_README.index("## The command line") :]


def commands(
    parser: argparse.ArgumentParser, prefix: str = "bundler"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's parser, `bundler chart push` included, with its full name."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{prefix} {name}")


def flags(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.Action, str]]:
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--") and option not in ("--help", "--version"):
                yield action, option


ALL = list(commands(build_parser()))
IDS = [name for name, _ in ALL]


@pytest.mark.parametrize(("name", "parser"), ALL, ids=IDS)
def test_every_subcommand_and_flag_has_help_text(
    name: str, parser: argparse.ArgumentParser
) -> None:
    assert parser.description or name == "bundler" or _has_help(parser), name
    missing = [option for action, option in flags(parser) if not action.help]
    assert missing == [], f"{name}: flags without help: {missing}"


def _has_help(parser: argparse.ArgumentParser) -> bool:
    return bool(parser.format_help().strip())


@pytest.mark.parametrize(("name", "parser"), ALL, ids=IDS)
def test_the_readme_lists_every_flag_of_every_subcommand(
    name: str, parser: argparse.ArgumentParser
) -> None:
    missing = sorted({option for _, option in flags(parser) if option not in README})
    assert missing == [], f"{name}: flags the README does not mention: {missing}"


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "-f", "examples/"],
        [
            "explain",
            "-f",
            "examples/podinfo",
            "--bundle",
            "fleet-default/podinfo",
            "--cluster",
            "fleet-default/prod-eu-1",
        ],
        ["crds"],
    ],
    ids=["render", "explain", "crds"],
)
def test_a_reader_that_goes_away_is_no_failure(argv: list[str]) -> None:
    """`bundler explain ... | head`: no "Broken pipe", exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bundler", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first write
    err = proc.stderr.read().decode()
    assert (proc.wait(), err) == (0, "")
