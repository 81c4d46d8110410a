"""Agent mode handover over HTTP, pull to remote: the pull agent lets go of its release before the
remote agent adopts it, Flux uninstalls nothing, and an offline pull agent holds the handover until
an operator forces it; the pull agent's identity is removed only once the handover is done, and made
again (with a new token) back in pull mode. Manager, pull agent and remote agents each run with
their real identity."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER, HELM_RELEASE, SECRET
from bundler.core.agent.identity import agent_identity
from bundler.core.handover import ANNOTATION_FORCE_HANDOVER, ANNOTATION_PULL_IDENTITY_REMOVED
from bundler.core.naming import cluster_namespace
from bundler.kube.store import KubeStore
from bundler.sim.helm_controller import SimulatedHelmController
from bundler.store.errors import NotFound, StoreError
from bundler.store.protocol import EventType, Obj
from tests.support.agent.http_fleet import Downstream, HttpFleet, eventually
from tests.support.builders import WS, bundle
from tests.support.identities import agent_kubeconfig
from tests.support.schemas import validate
from tests.support.stores import exists

EDGE = "edge-1"
NAMESPACE = cluster_namespace(WS, EDGE)
REMOTE_SPEC = {"agentMode": "remote", "kubeConfigSecret": f"{EDGE}-kubeconfig"}
# The pull agent heartbeats often, so it learns its Cluster's new mode within the test's patience.
HEARTBEAT = 0.2


class Handover:
    """A pull-mode Cluster with one installed release, remote agents served, and a record of
    every moment a remote HelmRelease appeared while the pull side still had one."""

    def __init__(self, fleet: HttpFleet) -> None:
        self.fleet = fleet
        self.remote_flux: SimulatedHelmController = fleet.serve_remote()
        self.downstream: Downstream = fleet.add_cluster(EDGE)
        kubeconfig = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()
        secret = {"metadata": {"name": f"{EDGE}-kubeconfig", "namespace": WS}}
        fleet.management.store.create(SECRET, {**secret, "data": {"value": kubeconfig}})
        self.overlaps: list[str] = []

    def start(self) -> Obj:
        """Deploy the bundle in pull mode; returns the pull agent's HelmRelease."""
        self.fleet.start(self.remote_flux)
        self.fleet.put(BUNDLE, bundle([{"clusterSelector": {}}], namespace="apps").to_wire())
        eventually(lambda: self.fleet.ready_clusters("app") == "1/1", "the pull release Ready")
        self.remote_flux.informer.add_handler(self._record_overlap)
        release = self.downstream.release("app")
        assert release is not None
        return release

    def _record_overlap(self, event: EventType, obj: Obj) -> None:
        # The authoritative store, not a cache: a remote HelmRelease exists only after the pull
        # side's are gone, terminating ones included.
        if event is not EventType.DELETED and self.downstream.server.store.list(HELM_RELEASE).items:
            self.overlaps.append(obj["metadata"]["name"])

    def switch_to_remote(self, **annotations: str) -> None:
        patch: dict[str, Any] = {"spec": REMOTE_SPEC}
        if annotations:
            patch["metadata"] = {"annotations": annotations}
        self.fleet.management.store.patch(CLUSTER, EDGE, patch, WS)

    def pull_identity(self) -> list[str]:
        """The pull agent identity objects in the cluster namespace and the workspace."""
        return [
            f"{o.res.kind} {o.namespace}/{o.name}"
            for o in agent_identity(WS, EDGE)
            if exists(self.fleet.management.store, o.res, o.name, o.namespace)
        ]

    def agent_status(self) -> dict[str, Any]:
        cluster = self.fleet.management.store.get(CLUSTER, EDGE, WS)
        agent: dict[str, Any] = (cluster.get("status") or {}).get("agent") or {}
        return agent

    def remote_release(self) -> Obj | None:
        try:
            found = self.fleet.management.store.get(HELM_RELEASE, "app", NAMESPACE)
        except NotFound:
            return None
        validate(found)
        return found

    def remote_ready(self) -> bool:
        release = self.remote_release()
        conditions = ((release or {}).get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


@pytest.fixture
def handover(tmp_path: Path) -> Iterator[Handover]:
    fleet = HttpFleet(tmp_path, agent_heartbeat=HEARTBEAT)
    try:
        yield Handover(fleet)
    finally:
        fleet.stop()


def test_pull_agent_lets_go_before_the_remote_side_adopts_the_release(
    handover: Handover,
) -> None:
    pulled = handover.start()
    installed = handover.downstream.flux.releases()
    assert list(installed) == [("apps", "app")]

    handover.switch_to_remote()
    eventually(handover.remote_ready, "the remote HelmRelease Ready")

    # No moment had two HelmReleases; Flux uninstalled nothing; the pull side holds nothing.
    assert handover.overlaps == []
    assert handover.downstream.flux.releases() == installed
    assert handover.downstream.flux_objects() == []
    assert handover.agent_status()["releasesHandedOver"] is True
    assert "handoverPending" not in handover.agent_status()
    # Once the pull agent has reported its handover, its identity is gone.
    eventually(lambda: handover.pull_identity() == [], "the pull agent identity removed")
    # The same release in the same storage namespace: Flux adopts it rather than installing anew.
    adopted = handover.remote_release()
    assert adopted is not None
    same = ("releaseName", "storageNamespace", "targetNamespace")
    assert [adopted["spec"].get(k) for k in same] == [pulled["spec"].get(k) for k in same]
    eventually(lambda: handover.fleet.ready_clusters("app") == "1/1", "the bundle Ready again")


def test_remote_side_waits_for_an_offline_pull_agent_until_forced(handover: Handover) -> None:
    handover.start()
    installed = handover.downstream.flux.releases()
    agent = handover.downstream.agent
    assert agent is not None
    agent.stop()  # offline: it will never let go

    handover.switch_to_remote()
    eventually(lambda: "handoverPending" in handover.agent_status(), "the pending handover")
    pending = handover.agent_status()["handoverPending"]
    assert f"{ANNOTATION_FORCE_HANDOVER}=true" in pending
    remote = handover.fleet.remote
    assert remote is not None and remote.agents() == {}
    assert handover.remote_release() is None
    with pytest.raises(NotFound):  # no downstream credentials where the pull agent reads
        handover.fleet.management.store.get(SECRET, f"{EDGE}-kubeconfig", NAMESPACE)
    assert handover.downstream.release("app") is not None
    # The pull agent may yet come back to report its handover: its identity stays meanwhile.
    assert len(handover.pull_identity()) == len(agent_identity(WS, EDGE))

    handover.switch_to_remote(**{ANNOTATION_FORCE_HANDOVER: "true"})
    eventually(handover.remote_ready, "the remote HelmRelease Ready once forced")
    eventually(lambda: handover.pull_identity() == [], "the pull agent identity removed")
    assert "handoverPending" not in handover.agent_status()
    assert handover.downstream.flux.releases() == installed


def test_pull_agent_deploys_again_once_its_cluster_is_back_in_pull_mode(
    handover: Handover,
) -> None:
    handover.start()
    installed = handover.downstream.flux.releases()
    handover.switch_to_remote()
    eventually(handover.remote_ready, "the remote HelmRelease Ready")

    eventually(lambda: handover.pull_identity() == [], "the pull agent identity removed")

    handover.fleet.management.store.patch(CLUSTER, EDGE, {"spec": {"agentMode": "pull"}}, WS)
    # Back in pull mode the Cluster has an identity again, with a new token: the operator issues
    # the pull agent its kubeconfig anew (`bundler agent-kubeconfig`).
    handover.fleet.start_agent(EDGE)
    eventually(lambda: handover.downstream.release("app") is not None, "the pull HelmRelease")
    eventually(lambda: handover.remote_release() is None, "the remote HelmRelease gone")
    assert handover.agent_status()["releasesHandedOver"] is False
    assert set(handover.downstream.flux.releases()) == set(installed)


def _kubeconfig_copy_as(store: KubeStore) -> str:
    """What reading the kubeconfig copy in the cluster namespace as `store`'s identity gives."""
    try:
        store.get(SECRET, f"{EDGE}-kubeconfig", NAMESPACE)
    except NotFound:
        return "not found"
    except StoreError as refused:
        return f"refused: {type(refused).__name__}"
    return "READ"


def test_with_the_manager_stopped_the_kubeconfig_waits_and_no_pull_token_reads_it(
    handover: Handover, tmp_path: Path
) -> None:
    handover.start()
    fleet = handover.fleet
    token = fleet.open_as(agent_kubeconfig(fleet.management, tmp_path, WS, EDGE))
    assert _kubeconfig_copy_as(token) == "not found"  # the pull agent may get Secrets there
    fleet.manager.stop()

    handover.switch_to_remote()
    # The pull agent lets go and says so in its Cluster's status: not the word that counts.
    eventually(lambda: handover.agent_status().get("releasesHandedOver") is True, "its handover")
    eventually(
        lambda: "waiting for the manager" in (handover.agent_status().get("handoverPending") or ""),
        "the remote side waiting for the manager's word",
    )
    remote = fleet.remote
    assert remote is not None and remote.agents() == {}
    for _ in range(10):  # several heartbeats of the remote side: it still waits
        assert _kubeconfig_copy_as(token) == "not found"
        time.sleep(HEARTBEAT)
    assert len(handover.pull_identity()) == len(agent_identity(WS, EDGE))


def test_once_adopted_the_old_pull_token_reads_nothing(handover: Handover, tmp_path: Path) -> None:
    handover.start()
    fleet = handover.fleet
    token = fleet.open_as(agent_kubeconfig(fleet.management, tmp_path, WS, EDGE))
    handover.switch_to_remote()
    eventually(handover.remote_ready, "the remote HelmRelease Ready")
    cluster = fleet.management.store.get(CLUSTER, EDGE, WS)
    stamp = cluster["metadata"]["annotations"][ANNOTATION_PULL_IDENTITY_REMOVED]
    assert stamp == str(cluster["metadata"]["generation"])
    assert fleet.management.store.get(SECRET, f"{EDGE}-kubeconfig", NAMESPACE)  # copied
    assert _kubeconfig_copy_as(token).startswith("refused")
