"""Remote mode in memory: one process serves every remote Cluster from the management cluster."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from bundler.agent.config import AgentConfig
from bundler.agent.desired import desired_objects
from bundler.agent.remote import RemoteAgents, RemoteSettings
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.resources import (
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    HELM_RELEASE,
    HELM_REPOSITORY,
    OCI_REPOSITORY,
    SECRET,
)
from bundler.core.naming import cluster_namespace
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.sim.flux import SimulatedFlux
from bundler.store.memory import MemoryStore
from tests.agent.conftest import WAIT
from tests.agent.objects import bd_object
from tests.builders import WS, cluster
from tests.schemas import validate

KUBECONFIG = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()


class RemoteWorld:
    def __init__(self, clock: ManualClock) -> None:
        self.store = MemoryStore(clock=clock.now)
        self.host = Host(self.store, clock=clock, workers=2)
        self.remote = RemoteAgents(self.host, self.store, RemoteSettings(workspaces=(WS,)))
        self.flux = SimulatedFlux(self.host, self.store, lambda _: ("remote", {}))

    def add_cluster(self, name: str, **spec: Any) -> None:
        self.store.create(
            SECRET,
            {
                "metadata": {"name": f"{name}-kubeconfig", "namespace": WS},
                "data": {"value": KUBECONFIG},
            },
        )
        self.store.create(CLUSTER, cluster(name, **spec).to_wire())

    def settle(self) -> None:
        assert self.host.wait_idle(WAIT)


@pytest.fixture
def remote(clock: ManualClock) -> Iterator[RemoteWorld]:
    world = RemoteWorld(clock)
    world.remote.start()
    world.flux.start()
    world.host.start()
    yield world
    world.host.stop(WAIT)
    world.remote.stop()


def test_remote_cluster_gets_releases_with_its_kubeconfig(remote: RemoteWorld) -> None:
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.add_cluster("pulled", kubeConfigSecret="pulled-kubeconfig")
    remote.settle()
    assert list(remote.remote.agents()) == [Key(WS, "edge-1")]
    namespace = cluster_namespace(WS, "edge-1")
    copied = remote.store.get(SECRET, "edge-1-kubeconfig", namespace)
    assert copied["data"] == {"value": KUBECONFIG}

    remote.store.create(BUNDLE_DEPLOYMENT, bd_object(cluster_name="edge-1"))
    remote.settle()
    release = remote.store.get(HELM_RELEASE, "app", namespace)
    validate(release)
    spec = release["spec"]
    assert spec["kubeConfig"] == {"secretRef": {"name": "edge-1-kubeconfig", "key": "value"}}
    assert (spec["targetNamespace"], spec["storageNamespace"]) == ("app", "app")
    bd = remote.store.get(BUNDLE_DEPLOYMENT, "app", namespace)
    assert bd["status"]["ready"] is True
    assert remote.store.get(CLUSTER, "edge-1", WS)["status"]["agent"]["lastSeen"]


def test_rotated_kubeconfig_is_copied_again(remote: RemoteWorld) -> None:
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.settle()
    rotated = base64.b64encode(b"rotated").decode()
    remote.store.patch(SECRET, "edge-1-kubeconfig", {"data": {"value": rotated}}, WS)
    remote.store.patch(CLUSTER, "edge-1", {"metadata": {"labels": {"touched": "yes"}}}, WS)
    remote.settle()
    copied = remote.store.get(SECRET, "edge-1-kubeconfig", cluster_namespace(WS, "edge-1"))
    assert copied["data"] == {"value": rotated}


def test_cluster_leaving_remote_mode_stops_its_agent(remote: RemoteWorld) -> None:
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.settle()
    remote.store.patch(CLUSTER, "edge-1", {"spec": {"agentMode": "pull"}}, WS)
    remote.settle()
    assert remote.remote.agents() == {}
    remote.store.delete(CLUSTER, "edge-1", WS)
    remote.settle()
    assert remote.remote.agents() == {}


@pytest.mark.parametrize(
    "spec",
    [{"agentMode": "pull"}, {"kubeConfigSecret": None}],
    ids=["switched-to-pull", "kubeconfig-secret-unset"],
)
def test_leaving_remote_mode_removes_the_kubeconfig_copy(
    remote: RemoteWorld, spec: dict[str, Any]
) -> None:
    namespace = cluster_namespace(WS, "edge-1")
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    # A Secret of the cluster namespace that is not the copy (e.g. copied credentials) stays.
    other = {"metadata": {"name": "registry-creds", "namespace": namespace}, "data": {}}
    remote.settle()
    remote.store.create(SECRET, other)
    assert remote.store.get(SECRET, "edge-1-kubeconfig", namespace)
    remote.store.patch(CLUSTER, "edge-1", {"spec": spec}, WS)
    remote.settle()
    assert remote.store.list(SECRET, namespace).items == [
        remote.store.get(SECRET, "registry-creds", namespace)
    ]
    assert remote.store.get(SECRET, "edge-1-kubeconfig", WS)


def test_every_exit_from_remote_mode_removes_the_copy(remote: RemoteWorld) -> None:
    namespace = cluster_namespace(WS, "edge-1")
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.settle()
    remote.store.patch(CLUSTER, "edge-1", {"spec": {"agentMode": "pull"}}, WS)
    remote.settle()
    remote.store.patch(CLUSTER, "edge-1", {"spec": {"agentMode": "remote"}}, WS)
    remote.settle()
    assert remote.store.get(SECRET, "edge-1-kubeconfig", namespace)
    remote.store.patch(CLUSTER, "edge-1", {"spec": {"agentMode": "pull"}}, WS)
    remote.settle()
    assert remote.store.list(SECRET, namespace).items == []


def test_leaving_remote_mode_hands_the_release_over_without_uninstalling_it(
    remote: RemoteWorld,
) -> None:
    namespace = cluster_namespace(WS, "edge-1")
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.store.create(BUNDLE_DEPLOYMENT, bd_object(cluster_name="edge-1"))
    remote.settle()
    installed = remote.flux.releases()
    assert list(installed) == [("app", "app")]
    handed = remote.store.get(HELM_RELEASE, "app", namespace)
    remote.store.patch(CLUSTER, "edge-1", {"spec": {"agentMode": "pull"}}, WS)
    remote.settle()
    # The remote side manages nothing any more, and Flux uninstalled nothing.
    for res in (HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY):
        assert remote.store.list(res, namespace).items == []
    assert remote.flux.releases() == installed
    # The pull agent's HelmRelease names the same release in the same storage namespace, so its
    # Flux adopts the installed release (an upgrade, not a second install).
    bd = BundleDeployment.model_validate(remote.store.get(BUNDLE_DEPLOYMENT, "app", namespace))
    pulled = desired_objects(bd, AgentConfig(workspace=WS, cluster="edge-1"), None).release
    same = ("releaseName", "storageNamespace", "targetNamespace")
    assert [pulled["spec"][k] for k in same] == [handed["spec"][k] for k in same]
