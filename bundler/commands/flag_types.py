"""Checks of numeric and name flags, so a bad value fails before anything runs, naming the flag.

Two spellings of the same rules: argparse `type=` functions (a usage error, exit 2), and `check_*`
functions raising InvalidInputError with the flag as the field (exit 2 through the CLI), for flags
whose values are checked after parsing.

Seconds must be finite: `float()` accepts "nan" and "inf", which no timer, timeout or sleep can use
(NaN even passes every `<= 0` check, and an infinite timeout overflows the socket's).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from bundler.core.naming import is_dns1123_label
from bundler.errors import InvalidInputError


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds greater than zero."""
    return _parsed_seconds(text, allow_zero=False)


def non_negative_seconds(text: str) -> float:
    """argparse type: a finite number of seconds, zero allowed."""
    return _parsed_seconds(text, allow_zero=True)


def mebibytes(minimum: int, why: str = "") -> Callable[[str], int]:
    """argparse type: a whole number of MiB, at least `minimum` (`why`, in the message)."""

    def parsed(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of MiB") from None
        if value < minimum:
            reason = f" ({why})" if why else ""
            raise argparse.ArgumentTypeError(f"must be at least {minimum} MiB{reason}, got {value}")
        return value

    return parsed


def namespace_name(text: str) -> str:
    """argparse type: a Kubernetes namespace name (DNS-1123 label)."""
    problem = _namespace_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def check_seconds(value: float, flag: str, *, allow_zero: bool = False) -> None:
    """InvalidInputError naming `flag` unless `value` is a finite, positive (or zero) duration."""
    problem = _seconds_problem(value, allow_zero=allow_zero)
    if problem:
        raise InvalidInputError(problem, field=flag)


def check_namespace_names(names: list[str], flag: str) -> None:
    """InvalidInputError naming `flag` unless every name is a namespace name."""
    for name in names:
        problem = _namespace_problem(name)
        if problem:
            raise InvalidInputError(problem, field=flag)


def _parsed_seconds(text: str, *, allow_zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    problem = _seconds_problem(value, allow_zero=allow_zero)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def _seconds_problem(value: float, *, allow_zero: bool) -> str | None:
    if not math.isfinite(value):
        return f"must be a finite number of seconds, got {value}"
    if value < 0 or (value == 0 and not allow_zero):
        bound = "must not be negative" if allow_zero else "must be positive"
        return f"{bound}, got {value:g}"
    return None


def _namespace_problem(name: str) -> str | None:
    if is_dns1123_label(name):
        return None
    return f"{name!r} is not a namespace name (DNS-1123 label)"


DEFAULT_WORKSPACE = "fleet-default"


def add_workspace_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`-n/--namespace WS`: the workspace, `what` saying when it applies."""
    parser.add_argument(
        "-n",
        "--namespace",
        type=namespace_name,
        default=DEFAULT_WORKSPACE,
        metavar="WS",
        help=f"{what} (default {DEFAULT_WORKSPACE})",
    )
