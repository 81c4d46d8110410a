"""A fleet over real HTTP: the management cluster and every downstream cluster are test API servers
on 127.0.0.1; the manager and the agents talk to them through KubeStores, as in production, each
under the identity it has in a real cluster: the manager with exactly the RBAC it ships
(bundler.core.rbac), each pull agent with the kubeconfig `bundler agent-kubeconfig` prints, made
once the manager has set up the agent's identity. The simulated Flux of each cluster works on that
server's backing store (it stands in for Flux, which is not under test); remote agents run on their
own host as the remote agent's ServiceAccount, with exactly its RBAC."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.agent.agent import Agent
from bundler.agent.config import DEFAULT_HEARTBEAT_INTERVAL, AgentConfig
from bundler.agent.remote import RemoteAgents, RemoteSettings
from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    FLUX_KINDS,
    HELM_RELEASE,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.apiserver import ApiServer
from bundler.core.rbac import MANAGER_RULES, REMOTE_AGENT_RULES, PolicyRule
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.host import Host
from bundler.sim.helm_controller import FluxSettings, SimulatedHelmController
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj
from tests.support.builders import WS, cluster
from tests.support.identities import agent_kubeconfig, manager_kubeconfig, remote_agent_kubeconfig
from tests.support.schemas import validate

FAST = KubeOptions(retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0))
# Upper bound (real seconds) on waiting for the fleet; tests never assert on durations.
PATIENCE = 20.0
AGENT_NAMESPACE = "bundler-system"


class Downstream:
    """One simulated cluster: its API server, the agent's store on it, its Flux."""

    def __init__(
        self, name: str, server: ApiServer, store: KubeStore, flux: SimulatedHelmController
    ) -> None:
        self.name = name
        self.server = server
        self.store = store
        self.flux = flux
        self.agent: Agent | None = None

    def release(self, name: str) -> Obj | None:
        try:
            found = self.server.store.get(HELM_RELEASE, name, AGENT_NAMESPACE)
        except NotFound:
            return None
        validate(found)
        return found

    def flux_objects(self) -> list[Obj]:
        """Every Flux object on the cluster, each validated against the Flux CRDs."""
        found = [obj for res in FLUX_KINDS for obj in self.server.store.list(res).items]
        for obj in found:
            validate(obj)
        return found


class HttpFleet:
    def __init__(
        self,
        tmp_path: Path,
        rules: Iterable[PolicyRule] = MANAGER_RULES,
        *,
        leader_elect: bool = False,
        agent_heartbeat: float = DEFAULT_HEARTBEAT_INTERVAL,
    ) -> None:
        self.tmp_path = tmp_path
        self.agent_heartbeat = agent_heartbeat
        self.servers: list[ApiServer] = []
        self.stores: list[KubeStore] = []
        self.management = self._server("management")
        self.management.store.create(NAMESPACE, {"metadata": {"name": WS}})
        self.mgmt = self._connect(self.management, "management")
        self.manager_store = self._open(manager_kubeconfig(self.management, tmp_path, rules))
        self.host = Host(self.mgmt, workers=4, backoff_cap=0.5, name="agents")
        options = ManagerOptions(namespaces=(WS,), workers=2, leader_elect=leader_elect)
        self.manager = Manager(self.manager_store, options)
        self.clusters: dict[str, Downstream] = {}
        self.remote: RemoteAgents | None = None
        self.extra_fluxes: list[SimulatedHelmController] = []
        self._started = False

    # -- building -----------------------------------------------------------------------------

    def add_cluster(
        self,
        name: str,
        labels: dict[str, str] | None = None,
        *,
        settings: FluxSettings | None = None,
        flux_installed: bool = True,
    ) -> Downstream:
        """A pull-mode cluster with its own API server, agent and simulated Flux."""
        server = self._server(name)
        if not flux_installed:
            for res in FLUX_KINDS:
                server.remove_resource(res)
        store = self._connect(server, name)
        ref = f"{WS}/{name}"
        flux = SimulatedHelmController(
            self.host, server.store, lambda _: (ref, labels or {}), settings, name=f"flux:{name}"
        )
        downstream = Downstream(name, server, store, flux)
        self.management.store.create(CLUSTER, cluster(name, labels).to_wire())
        self.clusters[name] = downstream
        return downstream

    def serve_remote(
        self, rules: Iterable[PolicyRule] = REMOTE_AGENT_RULES
    ) -> SimulatedHelmController:
        """Remote mode: the agents of remote Clusters and Flux both on the management cluster."""
        remote = self._open(remote_agent_kubeconfig(self.management, self.tmp_path, rules))
        self.remote_host = Host(remote, workers=2, backoff_cap=0.5, name="remote-agents")
        self.remote = RemoteAgents(self.remote_host, remote, RemoteSettings(workspaces=(WS,)))
        flux = SimulatedHelmController(
            self.host, self.management.store, lambda _: ("remote", {}), name="flux:management"
        )
        self.extra_fluxes.append(flux)
        return flux

    def add_remote_cluster(self, name: str) -> None:
        """A remote-mode Cluster with its kubeconfig Secret (served by `serve_remote`)."""
        kubeconfig = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()
        secret = {"metadata": {"name": f"{name}-kubeconfig", "namespace": WS}}
        self.management.store.create(SECRET, {**secret, "data": {"value": kubeconfig}})
        remote = cluster(name, agentMode="remote", kubeConfigSecret=f"{name}-kubeconfig")
        self.management.store.create(CLUSTER, remote.to_wire())

    def start(self, *fluxes: SimulatedHelmController, agents: bool = True) -> None:
        """Start Flux, the manager, then (unless told) each pull agent with the kubeconfig made
        for it."""
        for downstream in self.clusters.values():
            if _serves_flux(downstream.server):
                downstream.flux.start()
        for flux in fluxes:
            flux.start()
        if self.remote is not None:
            self.remote.start()
            self.remote_host.start()
        self.host.start()
        self._started = True  # stop() stops the manager even when its start failed
        self.manager.start()
        for name in self.clusters if agents else ():
            self.start_agent(name)

    def start_agent(self, name: str) -> None:
        """Start (again) cluster `name`'s pull agent with the kubeconfig made for it now, as an
        operator does once the Cluster is in pull mode (a new identity has a new token)."""
        downstream = self.clusters[name]
        if downstream.agent is not None:
            downstream.agent.stop()
        kubeconfig = agent_kubeconfig(self.management, self.tmp_path, WS, name)
        config = AgentConfig(workspace=WS, cluster=name, heartbeat_interval=self.agent_heartbeat)
        downstream.agent = Agent(self.host, self._open(kubeconfig), downstream.store, config)
        downstream.agent.start()

    def stop(self) -> None:
        if self._started:
            self.manager.stop()
            self.host.stop()
        for downstream in self.clusters.values():
            if downstream.agent is not None:
                downstream.agent.caches.stop()
            downstream.flux.informer.stop()
        for flux in self.extra_fluxes:
            flux.informer.stop()
        if self.remote is not None:
            self.remote_host.stop()
            self.remote.stop()
        for store in self.stores:
            store.close()
        for server in self.servers:
            server.stop()

    def open_as(self, kubeconfig: Path) -> KubeStore:
        """A store on the server `kubeconfig` names, as the identity it holds (closed with the
        fleet)."""
        return self._open(kubeconfig)

    def _server(self, name: str) -> ApiServer:
        server = ApiServer().start()
        self.servers.append(server)
        return server

    def _connect(self, server: ApiServer, name: str) -> KubeStore:
        """A store on `server` as its admin."""
        return self._open(server.kubeconfig(self.tmp_path / f"{name}.kubeconfig"))

    def _open(self, kubeconfig: Path) -> KubeStore:
        store = KubeStore.from_kubeconfig(kubeconfig, None, FAST)
        self.stores.append(store)
        return store

    # -- the management side ------------------------------------------------------------------

    def put(self, res: Resource, obj: Obj) -> None:
        """Create, or replace the spec of, an object on the management cluster."""
        meta = obj["metadata"]
        store = self.management.store
        try:
            live = store.get(res, meta["name"], meta.get("namespace"))
        except NotFound:
            store.create(res, obj)
        else:
            store.update(res, {**live, "spec": obj["spec"]})

    def bundle_status(self, name: str) -> dict[str, Any]:
        status: dict[str, Any] = self.management.store.get(BUNDLE, name, WS).get("status") or {}
        return status

    def ready_clusters(self, name: str) -> str | None:
        display = self.bundle_status(name).get("display") or {}
        ready: str | None = display.get("readyClusters")
        return ready

    def bundle_deployments(self) -> list[Obj]:
        return self.management.store.list(BUNDLE_DEPLOYMENT).items


@pytest.fixture
def http_fleets() -> Iterator[list[HttpFleet]]:
    """Fleets a test builds (appended to the list), every one stopped after the test."""
    built: list[HttpFleet] = []
    yield built
    for fleet in built:
        fleet.stop()


def _serves_flux(server: ApiServer) -> bool:
    return HELM_RELEASE in server.served_resources()


def eventually(check: Callable[[], bool], what: str, patience: float = PATIENCE) -> None:
    """Poll `check` until it holds; fail naming `what` after `patience` real seconds."""
    deadline = time.monotonic() + patience
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
