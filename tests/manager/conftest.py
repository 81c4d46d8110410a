"""Fixtures of the manager tests: a manual clock, an in-memory store holding the workspace, and
managers that always stop, and the test API server with KubeStores talking to it
(tests.support.manager.http_stores). What the tests share besides lives in
tests.support.manager.world."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bundler.api.resources import NAMESPACE
from bundler.manager.app import Manager
from bundler.manager.app import start_manager as launch
from bundler.manager.options import ManagerOptions
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Store
from tests.support.builders import WS
from tests.support.manager.http_stores import admin, connect, remote, server
from tests.support.manager.world import WAIT, StartManager

__all__ = ["admin", "connect", "remote", "server"]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> MemoryStore:
    memory = MemoryStore(clock=clock.now)
    memory.create(NAMESPACE, {"metadata": {"name": WS}})
    return memory


@pytest.fixture
def start_manager(clock: ManualClock) -> Iterator[StartManager]:
    """Starts managers (ManualClock, 2 workers unless told) and stops every one after the test."""
    started: list[Manager] = []

    def start(store: Store, **options: Any) -> Manager:
        options.setdefault("workers", 2)
        manager = launch(store, ManagerOptions(**options), clock)
        started.append(manager)
        return manager

    yield start
    for manager in started:
        manager.stop(WAIT)
