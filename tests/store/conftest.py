"""Fixtures for the in-memory store tests: a store with a fixed clock; the event recorder is
tests.support.store.memory_store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bundler.store.memory import MemoryStore

NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore(clock=lambda: NOW)
