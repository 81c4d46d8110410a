"""The importer running over the test API server: a real HTTP server on 127.0.0.1 backed by the
in-memory store, a KubeStore talking to it, and a runtime Host on a manual clock.

Tests write the world (CAPI Clusters, Secrets, Namespaces) straight into the server's store and
read what the importer wrote back from it; the importer itself only ever goes through HTTP, as the
manager's ServiceAccount with exactly the manager's RBAC (tests.support.identities).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from bundler.api.resources import ALL_KINDS, NAMESPACE, Resource
from bundler.apiserver import ApiServer
from bundler.capi.start import CapiImportOptions, start_capi_importer
from bundler.core.rbac import MANAGER_RULES, PolicyRule
from bundler.kube.store import KubeStore
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from tests.support.capi.capi_objects import WS
from tests.support.capi.fleet import Fleet, MakeFleet
from tests.support.identities import manager_kubeconfig

_STOP_TIMEOUT = 10.0


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
