"""The `bundler` command: builds the parser from the command modules and translates errors.

Every command module in bundler/commands exposes `register(subparsers)`, which adds its parser and
sets `run` to a function taking the parsed arguments and returning the exit code. Errors reach the
user here as one line on stderr, never as a traceback: invalid input exits 2, anything else 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bundler import __version__
from bundler.commands import COMMANDS
from bundler.errors import BundlerError, InvalidInputError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bundler",
        description="Deploy Helm charts to fleets of Kubernetes clusters.",
    )
    parser.add_argument("--version", action="version", version=f"bundler {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except InvalidInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INVALID
    except BundlerError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    return code
