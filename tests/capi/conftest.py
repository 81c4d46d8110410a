"""The importer running over the test API server: a real HTTP server on 127.0.0.1 backed by the
in-memory store, a KubeStore talking to it, and a runtime Host on a manual clock.

Tests write the world (CAPI Clusters, Secrets, Namespaces) straight into the server's store and
read what the importer wrote back from it; the importer itself only ever goes through HTTP, as the
manager's ServiceAccount with exactly the manager's RBAC (tests.support.identities).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import ALL_KINDS, CAPI_CLUSTER, CLUSTER, NAMESPACE, Resource
from bundler.apiserver import ApiServer
from bundler.capi.start import CapiImporter, CapiImportOptions, start_capi_importer
from bundler.core.rbac import MANAGER_RULES, PolicyRule
from bundler.kube.store import KubeStore
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.capi.capi_objects import WS
from tests.support.identities import manager_kubeconfig

# Longest a test waits (real seconds) for the importer to catch up; never asserted on.
PATIENCE = 10.0
_POLL = 0.01
# Manual time that passes per poll, so retries with backoff run while a test waits; far below any
# bound a test checks (cleanup waits minutes).
_TICK = 0.05
_STOP_TIMEOUT = 10.0


@dataclass
class Fleet:
    """A running importer and the server it talks to."""

    server: ApiServer
    host: Host
    clock: ManualClock
    importer: CapiImporter | None
    stores: list[KubeStore] = field(default_factory=list)
    _barriers: Iterator[int] = field(default_factory=itertools.count)

    @property
    def store(self) -> MemoryStore:
        return self.server.store

    def eventually(self, check: Callable[[], Any], what: str) -> Any:
        """Poll `check` until it returns something truthy (returned) or PATIENCE runs out."""
        deadline = time.monotonic() + PATIENCE
        while True:
            found = check()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.clock.advance(_TICK)
            time.sleep(_POLL)

    def settle(self) -> None:
        """Wait until the host has nothing to do now (pending timers further out may remain)."""
        self.eventually(lambda: self.host.is_idle(), "the host to settle")

    def barrier(self) -> None:
        """Wait until the host has received and handled every Cluster event so far.

        One watch stream delivers events in order, so once the host's cache holds a Cluster
        created now, every earlier Cluster event has been dispatched; then the host settles.
        The barrier Cluster is registered by hand, so the importer leaves it alone.
        """
        name = f"barrier-{next(self._barriers)}"
        self.store.create(CLUSTER, {"metadata": {"name": name, "namespace": WS}})
        informer = self.host.informer(CLUSTER)
        self.eventually(lambda: informer.get(WS, name), f"the barrier {name}")
        self.settle()

    def find(self, res: Resource, name: str, namespace: str | None = WS) -> Obj | None:
        try:
            return self.store.get(res, name, namespace)
        except NotFound:
            return None

    def wait_for(self, res: Resource, name: str, namespace: str | None = WS) -> Obj:
        found: Obj = self.eventually(lambda: self.find(res, name, namespace), f"{res} {name}")
        return found

    def wait_gone(self, res: Resource, name: str, namespace: str | None = WS) -> None:
        self.eventually(lambda: self.find(res, name, namespace) is None, f"{res} {name} gone")

    def wait_until(self, res: Resource, name: str, check: Callable[[Obj], bool], what: str) -> Obj:
        def holds() -> Obj | None:
            obj = self.find(res, name)
            return obj if obj is not None and check(obj) else None

        found: Obj = self.eventually(holds, what)
        return found


MakeFleet = Callable[..., Fleet]


@pytest.fixture
def make_fleet(tmp_path: Path) -> Iterator[MakeFleet]:
    """Starts importers over fresh test API servers; stops everything after the test."""
    started: list[Fleet] = []

    def make(
        options: CapiImportOptions | None = None,
        *,
        resources: tuple[Resource, ...] = ALL_KINDS,
        namespaces: dict[str, dict[str, str]] | None = None,
        rules: Iterable[PolicyRule] = MANAGER_RULES,
    ) -> Fleet:
        server = ApiServer(resources=resources).start()
        for name, labels in (namespaces or {WS: {}}).items():
            server.store.create(NAMESPACE, {"metadata": {"name": name, "labels": labels}})
        # The importer is part of the manager: it runs with exactly the manager's RBAC.
        directory = tmp_path / f"fleet-{len(started)}"
        directory.mkdir()
        store = KubeStore.from_kubeconfig(manager_kubeconfig(server, directory, rules))
        clock = ManualClock()
        host = Host(store, clock=clock, name="capi-test")
        fleet = Fleet(server, host, clock, None, [store])
        started.append(fleet)
        fleet.importer = start_capi_importer(host, options)
        host.start()
        return fleet

    yield make
    for fleet in started:
        fleet.host.stop(_STOP_TIMEOUT)
        for store in fleet.stores:
            store.close()
        fleet.server.stop()


@pytest.fixture
def fleet(make_fleet: MakeFleet) -> Fleet:
    return make_fleet()


def create_capi(fleet: Fleet, obj: Obj, res: Resource = CAPI_CLUSTER) -> Obj:
    """Create a CAPI Cluster with its status (a subresource: written after the create)."""
    created = fleet.store.create(res, obj)
    if "status" in obj:
        created = fleet.store.patch_status(
            res, obj["metadata"]["name"], {"status": obj["status"]}, obj["metadata"]["namespace"]
        )
    return created
