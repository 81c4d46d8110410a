"""Flags that several `bundler` commands take, so each is spelled and checked the same way.

Each command still writes its own help text: what a flag means depends on the command.
"""

from __future__ import annotations

import argparse

from bundler.errors import InvalidInputError


def add_kubeconfig_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--kubeconfig PATH`: the cluster to talk to (unset: $KUBECONFIG, else in-cluster)."""
    parser.add_argument("--kubeconfig", metavar="PATH", help=help_text)


def add_workers_argument(
    parser: argparse.ArgumentParser, *, default: int | None, help_text: str
) -> None:
    """`--workers N`: how many reconcile workers; check the value with `check_workers`."""
    parser.add_argument("--workers", type=int, default=default, metavar="N", help=help_text)


def check_workers(workers: int) -> None:
    """InvalidInputError naming --workers unless there is at least one worker."""
    if workers < 1:
        raise InvalidInputError(f"must be at least 1, got {workers}", field="--workers")
