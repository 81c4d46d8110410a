"""A Cluster API fleet over HTTP (CapiFleet): the manager and importer against a real API server,
with client options quick to exhaust and a bounded wait for what should happen."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bundler.agent.remote import RemoteAgents, RemoteSettings
from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CAPI_CLUSTER,
    HELM_RELEASE,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.apiserver import ApiServer
from bundler.capi.start import CapiImportOptions, start_capi_importer
from bundler.core.naming import cluster_namespace
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.helm_controller import SimulatedHelmController
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj
from tests.support.identities import manager_kubeconfig, remote_agent_kubeconfig
from tests.support.schemas import validate

EXAMPLE = Path(__file__).parents[3] / "examples" / "capi"
WS = "capi-workloads"
FAST = KubeOptions(retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0))


# Longest a test waits (real seconds) for the fleet; never asserted on.
PATIENCE = 20.0


class CapiFleet:
    """The management cluster: a test API server, and every controller talking to it over HTTP."""

    def __init__(self, tmp_path: Path, *, bootstrap: bool = False) -> None:
        self.server = ApiServer().start()
        self.server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        # The manager and its importer, and the remote agents, each as its own ServiceAccount.
        manager = manager_kubeconfig(self.server, tmp_path)
        self.manager_client = KubeStore.from_kubeconfig(manager, None, FAST)
        options = ManagerOptions(namespaces=(WS,), workers=2, bootstrap=bootstrap)
        self.manager = Manager(self.manager_client, options)
        remote = remote_agent_kubeconfig(self.server, tmp_path)
        self.remote_client = KubeStore.from_kubeconfig(remote, None, FAST)
        self.agents = Host(self.remote_client, workers=4, backoff_cap=0.5, name="agents")
        settings = RemoteSettings(workspaces=(WS,))
        self.remote = RemoteAgents(self.agents, self.remote_client, settings)
        self.flux = SimulatedHelmController(
            self.agents, self.server.store, lambda _: ("remote", {}), name="flux:management"
        )
        # The importer on its own host and a manual clock, so the cleanup bound can be crossed.
        self.capi_clock = ManualClock()
        self.capi = Host(self.manager_client, clock=self.capi_clock, name="capi")
        self.importer = start_capi_importer(self.capi, CapiImportOptions(namespaces=(WS,)))

    def start(self) -> None:
        self.remote.start()
        self.flux.start()
        self.agents.start()
        self.manager.start()
        self.capi.start()

    def stop(self) -> None:
        self.capi.stop()
        self.manager.stop()
        self.agents.stop()
        self.remote.stop()
        self.flux.informer.stop()
        self.manager_client.close()
        self.remote_client.close()
        self.server.stop()

    @property
    def store(self) -> Any:
        return self.server.store

    def apply_examples(self) -> None:
        for path in sorted(EXAMPLE.glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
                self.apply(doc)

    def apply(self, doc: Obj) -> None:
        res = {"Bundle": BUNDLE, "Secret": SECRET}.get(doc["kind"])
        if res is not None:
            self.store.create(res, doc)
            return
        served = as_v1beta2(doc)
        self.store.create(CAPI_CLUSTER, served)
        status = {"status": served["status"]}
        self.store.patch_status(CAPI_CLUSTER, doc["metadata"]["name"], status, WS)

    def find(self, res: Resource, name: str, namespace: str | None) -> Obj | None:
        try:
            found: Obj = self.store.get(res, name, namespace)
        except NotFound:
            return None
        return found

    def release(self, cluster: str) -> Obj | None:
        return self.find(HELM_RELEASE, "calico", cluster_namespace(WS, cluster))

    def deployment(self, cluster: str) -> Obj | None:
        return self.find(BUNDLE_DEPLOYMENT, "calico", cluster_namespace(WS, cluster))


def as_v1beta2(doc: Obj) -> Obj:
    """A CAPI Cluster as the API server serves it in v1beta2 (the fields the examples use)."""
    if doc["apiVersion"] == CAPI_CLUSTER.api_version:
        return doc
    served = copy.deepcopy(doc)
    served["apiVersion"] = CAPI_CLUSTER.api_version
    topology = served["spec"]["topology"]
    topology["classRef"] = {"name": topology.pop("class")}
    status = served["status"]
    status["initialization"] = {
        "controlPlaneInitialized": status.pop("controlPlaneReady"),
        "infrastructureProvisioned": status.pop("infrastructureReady"),
    }
    validate(served)
    return served


def eventually(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + PATIENCE
    while not (found := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return found
