"""Fixtures: the test API server on 127.0.0.1, a KubeStore talking to it through a kubeconfig, and
a recorder for watch callbacks that never lets a test hang (tests.support.kube.store_client)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bundler.api.resources import NAMESPACE
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeOptions, KubeStore
from bundler.store.protocol import Watch
from tests.support.kube.store_client import FAST, Recorder


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
