"""Shared pieces of the runtime tests: a domain-free kind, a store, a manual clock, timers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bundler.api.resources import Resource
from bundler.runtime.clock import ManualClock
from bundler.runtime.timers import Timers
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

# The runtime knows nothing of bundler's kinds, so its tests use a made-up one.
WIDGET = Resource("example.dev", "v1", "Widget", "widgets")

# Upper bound (real seconds) on waits for other threads; tests never assert on durations.
WAIT = 10.0


def widget(name: str, namespace: str = "default", **labels: str) -> Obj:
    body: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace}, "spec": {}}
    if labels:
        body["metadata"]["labels"] = labels
    return body


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timers(clock: ManualClock) -> Iterator[Timers]:
    started = Timers(clock)
    started.start()
    yield started
    started.stop(WAIT)
