"""The manager over HTTP: the test API server on a manual clock, and KubeStores talking to it (the
manager's own and an admin's), as fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bundler.api.resources import NAMESPACE
from bundler.apiserver import ApiServer
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from tests.support.builders import WS
from tests.support.identities import admin_store, manager_kubeconfig

FAST = KubeOptions(retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0))


@pytest.fixture
def server(clock: ManualClock) -> Iterator[ApiServer]:
    with ApiServer(MemoryStore(clock=clock.now, require_namespaces=True)) as running:
        for name in (WS, "default"):
            running.store.create(NAMESPACE, {"metadata": {"name": name}})
        yield running


@pytest.fixture
def connect(server: ApiServer, tmp_path: Path) -> Iterator[Callable[[], KubeStore]]:
    """Opens KubeStores on the server as the manager's ServiceAccount, with exactly the manager's
    RBAC (tests.support.identities); closes them after the test."""
    opened: list[KubeStore] = []
    kubeconfig = manager_kubeconfig(server, tmp_path)

    def open_store() -> KubeStore:
        opened.append(KubeStore.from_kubeconfig(kubeconfig, None, FAST))
        return opened[-1]

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture
def remote(connect: Callable[[], KubeStore]) -> KubeStore:
    """The manager's store."""
    return connect()


@pytest.fixture
def admin(server: ApiServer, tmp_path: Path) -> Iterator[KubeStore]:
    """The test's own store, as the cluster admin (what `kubectl` would do)."""
    with admin_store(server, tmp_path) as store:
        yield store
