"""Fixtures: the test API server on 127.0.0.1, a KubeStore talking to it through a kubeconfig, and
a recorder for watch callbacks that never lets a test hang."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import NAMESPACE
from bundler.apiserver import ApiServer
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.kube.transport import Timeouts
from bundler.store.protocol import Watch, WatchEvent

# Retries that are quick to exhaust, so the bound is reached in well under a second.
FAST = KubeOptions(
    retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0),
    timeouts=Timeouts(connect=2.0, read=10.0),
)
# Longest a test waits for something that should happen promptly.
PATIENCE = 10.0


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer() as running:
        running.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        running.store.create(NAMESPACE, {"metadata": {"name": "other"}})
        yield running


@pytest.fixture
def connect(server: ApiServer, tmp_path: Path) -> Iterator[Callable[..., KubeStore]]:
    """Opens KubeStores on the server (with FAST retries unless told otherwise); closes them."""
    opened: list[KubeStore] = []

    def open_store(options: KubeOptions = FAST) -> KubeStore:
        store = KubeStore.from_kubeconfig(server.kubeconfig(tmp_path / "kubeconfig"), None, options)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture
def store(connect: Callable[..., KubeStore]) -> KubeStore:
    return connect()


class Recorder:
    """Collects what a watch calls back with; `next_*` wait a bounded time for the next one."""

    def __init__(self) -> None:
        self.events: queue.SimpleQueue[WatchEvent] = queue.SimpleQueue()
        self.errors: queue.SimpleQueue[Exception] = queue.SimpleQueue()

    def on_event(self, event: WatchEvent) -> None:
        self.events.put(event)

    def on_error(self, error: Exception) -> None:
        self.errors.put(error)

    def next_event(self) -> WatchEvent:
        return self.events.get(timeout=PATIENCE)

    def next_events(self, count: int) -> list[tuple[str, str]]:
        return [summary(self.next_event()) for _ in range(count)]

    def next_error(self) -> Exception:
        return self.errors.get(timeout=PATIENCE)


def summary(event: WatchEvent) -> tuple[str, str]:
    return event.type.value, event.object["metadata"]["name"]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    """Watches a test started; stopped before the server goes away."""
    started: list[Watch] = []
    yield started
    for watch in started:
        watch.stop()


def bundle(name: str, namespace: str = "ws", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"helm": {"chart": "podinfo"}},
    }
