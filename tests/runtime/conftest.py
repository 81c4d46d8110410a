"""Fixtures of the runtime tests: a store, a manual clock, timers; the domain-free kind they keep
in the store is tests.support.runtime.widgets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.runtime.clock import ManualClock
from bundler.runtime.timers import Timers
from bundler.store.memory import MemoryStore
from tests.support.runtime.widgets import WAIT


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
