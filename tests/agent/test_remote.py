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
    CONFIG_MAP,
    HELM_RELEASE,
    HELM_REPOSITORY,
    OCI_REPOSITORY,
    SECRET,
    Resource,
)
from bundler.core.handover import ANNOTATION_PULL_IDENTITY_REMOVED
from bundler.core.naming import cluster_namespace
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.sim.helm_controller import SimulatedHelmController
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.agent.objects import bd_object
from tests.support.agent.world import WAIT
from tests.support.builders import WS, cluster
from tests.support.schemas import validate

KUBECONFIG = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()


class DownstreamCluster:
    """The downstream cluster the remote agents reach through a kubeconfig, for valuesFrom."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.opened: list[tuple[str, str]] = []
        self.closed = 0

    def open(self, kubeconfig: str, source: str) -> DownstreamCluster:
        self.opened.append((kubeconfig, source))
        return self

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        return self.store.get(res, name, namespace)

    def close(self) -> None:
        self.closed += 1


class RemoteWorld:
    def __init__(self, clock: ManualClock, *, reach_clusters: bool = True) -> None:
        self.store = MemoryStore(clock=clock.now)
        self.host = Host(self.store, clock=clock, workers=2)
        self.downstream = DownstreamCluster()
        opener = self.downstream.open if reach_clusters else None
        self.remote = RemoteAgents(self.host, self.store, RemoteSettings(workspaces=(WS,)), opener)
        self.flux = SimulatedHelmController(self.host, self.store, lambda _: ("remote", {}))

    def add_cluster(self, name: str, **spec: Any) -> None:
        self.store.create(
            SECRET,
            {
                "metadata": {"name": f"{name}-kubeconfig", "namespace": WS},
                "data": {"value": KUBECONFIG},
            },
        )
        self.store.create(CLUSTER, cluster(name, **spec).to_wire())
        self.identity_removed(name)

    def identity_removed(self, name: str) -> None:
        """What the manager (not running here) says of a Cluster with no pull identity left."""
        generation = self.store.get(CLUSTER, name, WS)["metadata"]["generation"]
        stamp = {ANNOTATION_PULL_IDENTITY_REMOVED: str(generation)}
        self.store.patch(CLUSTER, name, {"metadata": {"annotations": stamp}}, WS)

    def settle(self) -> None:
        assert self.host.wait_idle(WAIT)


def _running(world: RemoteWorld) -> Iterator[RemoteWorld]:
    world.remote.start()
    world.flux.start()
    world.host.start()
    yield world
    world.host.stop(WAIT)
    world.remote.stop()


@pytest.fixture
def remote(clock: ManualClock) -> Iterator[RemoteWorld]:
    yield from _running(RemoteWorld(clock))


@pytest.fixture
def unreachable(clock: ManualClock) -> Iterator[RemoteWorld]:
    """Remote agents with no way to reach the downstream clusters (as in the simulator)."""
    yield from _running(RemoteWorld(clock, reach_clusters=False))


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
    # The manager's word was for the generation before pull mode: nothing is copied on it.
    assert remote.store.list(SECRET, namespace).items == []
    remote.identity_removed("edge-1")
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


VALUES_FROM: list[dict[str, Any]] = [
    {"kind": "ConfigMap", "name": "settings"},
    {"kind": "Secret", "name": "creds", "valuesKey": "password", "targetPath": "db.password"},
    {"kind": "Secret", "name": "absent", "optional": True},
]


def _downstream_values(remote: RemoteWorld) -> None:
    """valuesFrom objects where they live in both modes: the agent namespace downstream."""
    downstream = remote.downstream.store
    downstream.create(CONFIG_MAP, {"metadata": {"name": "settings", "namespace": "bundler-system"},
                                   "data": {"values.yaml": "greeting: hi\n"}})  # fmt: skip
    password = base64.b64encode(b"s3cret").decode()
    downstream.create(SECRET, {"metadata": {"name": "creds", "namespace": "bundler-system"},
                               "data": {"password": password}})  # fmt: skip


def test_values_from_objects_are_copied_beside_the_helm_release(remote: RemoteWorld) -> None:
    _downstream_values(remote)
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.store.create(
        BUNDLE_DEPLOYMENT, bd_object(cluster_name="edge-1", values_from=VALUES_FROM)
    )
    remote.settle()
    namespace = cluster_namespace(WS, "edge-1")
    release = remote.store.get(HELM_RELEASE, "app", namespace)
    validate(release)
    assert release["spec"]["valuesFrom"] == [
        {"kind": "Secret", "name": "app-configmap-settings"},
        {"kind": "Secret", "name": "app-secret-creds", "valuesKey": "password",
         "targetPath": "db.password"},
        {"kind": "Secret", "name": "app-secret-absent", "optional": True},
    ]  # fmt: skip
    settings = remote.store.get(SECRET, "app-configmap-settings", namespace)
    assert settings["data"] == {"values.yaml": base64.b64encode(b"greeting: hi\n").decode()}
    creds = remote.store.get(SECRET, "app-secret-creds", namespace)
    assert creds["data"] == {"password": base64.b64encode(b"s3cret").decode()}
    assert creds["metadata"]["labels"]["bundler.dev/bundledeployment"] == "app"
    assert remote.downstream.opened == [
        ("apiVersion: v1\nkind: Config\n", f"Secret {WS}/edge-1-kubeconfig")
    ]
    assert remote.store.get(BUNDLE_DEPLOYMENT, "app", namespace)["status"]["ready"] is True

    # Dropped from the spec, the copies go too.
    remote.store.delete(BUNDLE_DEPLOYMENT, "app", namespace)
    remote.settle()
    copies = remote.store.list(SECRET, namespace, {"bundler.dev/bundledeployment": "app"}).items
    assert copies == []


def _deployed(remote: RemoteWorld) -> dict[str, Any]:
    bd = remote.store.get(BUNDLE_DEPLOYMENT, "app", cluster_namespace(WS, "edge-1"))
    (deployed,) = [c for c in bd["status"]["conditions"] if c["type"] == "Deployed"]
    return dict(deployed)


def test_a_missing_values_object_is_reported_not_deployed(remote: RemoteWorld) -> None:
    remote.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    remote.store.create(
        BUNDLE_DEPLOYMENT, bd_object(cluster_name="edge-1", values_from=VALUES_FROM[:1])
    )
    remote.settle()
    deployed = _deployed(remote)
    assert (deployed["status"], deployed["reason"]) == ("False", "ValuesUnavailable")
    assert "ConfigMap bundler-system/settings does not exist on cluster" in deployed["message"]
    with pytest.raises(NotFound):
        remote.store.get(HELM_RELEASE, "app", cluster_namespace(WS, "edge-1"))


def test_without_a_way_to_the_cluster_values_from_is_invalid(unreachable: RemoteWorld) -> None:
    unreachable.add_cluster("edge-1", agentMode="remote", kubeConfigSecret="edge-1-kubeconfig")
    unreachable.store.create(
        BUNDLE_DEPLOYMENT, bd_object(cluster_name="edge-1", values_from=VALUES_FROM[:1])
    )
    unreachable.settle()
    deployed = _deployed(unreachable)
    assert (deployed["status"], deployed["reason"]) == ("False", "InvalidOptions")
    assert "spec.options.helm.valuesFrom" in deployed["message"]
