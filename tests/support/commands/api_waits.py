"""Bounded waits on an API server for the command tests: until a check holds, until an object
exists."""

from __future__ import annotations

import time
from collections.abc import Callable

from bundler.api.resources import Resource
from bundler.apiserver import ApiServer
from bundler.store.errors import NotFound

# Upper bound (seconds) on waiting for the manager; tests never assert on durations.
WAIT = 20.0


def wait_until(what: str, check: Callable[[], bool]) -> None:
    """Wait (bounded) until `check()` holds; the manager works on its own threads."""
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def exists(server: ApiServer, res: Resource, name: str, namespace: str) -> bool:
    try:
        server.store.get(res, name, namespace)
    except NotFound:
        return False
    return True
