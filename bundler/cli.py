"""The `bundler` command: builds the parser from the command modules and translates errors.

Every command module in bundler/commands exposes `register(subparsers)`, which adds its parser and
sets `run` to a function taking the parsed arguments and returning the exit code. Errors reach the
user here as one line on stderr, never as a traceback: invalid input exits 2, anything else 1 (a
registry's unusable answer too: a missing chart, one over a size cap). A file the command cannot
read or write (OSError) is such a failure; any other exception is a bug in bundler, reported as
one line too (BUNDLER_DEBUG=1 adds the traceback for the bug report).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from bundler import __version__
from bundler.commands import COMMANDS
from bundler.errors import BundlerError, InvalidInputError, RegistryAnswerError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2
DEBUG_ENV = "BUNDLER_DEBUG"


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
    except RegistryAnswerError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except InvalidInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INVALID
    except BundlerError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as err:
        print(f"error: {_describe_os_error(err)}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # the last line of defence: a bug, told in one line
        print(
            f"error: internal error ({type(err).__name__}: {_first_line(err)}); please report "
            f"it, with the output of the same command run with {DEBUG_ENV}=1",
            file=sys.stderr,
        )
        if os.environ.get(DEBUG_ENV):
            traceback.print_exc()
        return EXIT_FAILED
    return code


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0] if lines else ""


def _describe_os_error(err: OSError) -> str:
    """`PATH: reason` (both paths for a rename), without Python's `[Errno N]` prefix."""
    reason = err.strerror or str(err)
    paths = [str(p) for p in (err.filename, err.filename2) if p is not None]
    return ": ".join([" -> ".join(paths), reason]) if paths else reason
