"""End to end over HTTP: the examples/capi CAPI Clusters and Calico bundle on a test API server,
with the importer, the manager, the remote-mode agents and a simulated Flux on the management
cluster. The test API server does not convert between CAPI versions, so the v1beta1 example is
stored as a real server would serve it to the importer: in v1beta2.

Calico's IP pools follow each cluster's pod CIDRs into HelmReleases that reach the workload cluster
through `spec.kubeConfig.secretRef` (`<name>-kubeconfig`); the gated cluster gets nothing until its
control plane is initialized and its kubeconfig exists; label and CIDR changes propagate; deleting
a CAPI Cluster removes its Cluster, BundleDeployment and HelmRelease, and when the workload cluster
is unreachable (Flux cannot uninstall) the deletion still completes after the bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import CAPI_CLUSTER, CLUSTER, NAMESPACE, SECRET
from bundler.core.capi_import import ImportGate
from bundler.core.labels import ANNOTATION_IMPORT_GATE
from bundler.core.naming import cluster_namespace
from bundler.sim.sourced_controller import FLUX_FINALIZER
from bundler.store.protocol import Obj
from tests.support.capi.capi_fleet import WS, CapiFleet, eventually
from tests.support.capi.capi_objects import kubeconfig_secret
from tests.support.schemas import validate

POOL = {"encapsulation": "VXLAN", "natOutgoing": "Enabled", "nodeSelector": "all()"}
CLEANUP_BOUND = 600.0


def pools(release: Obj | None) -> list[dict[str, Any]] | None:
    if release is None:
        return None
    found: list[dict[str, Any]] = release["spec"]["values"]["installation"]["calicoNetwork"][
        "ipPools"
    ]
    return found


def pools_of(cidrs: list[str]) -> list[dict[str, Any]]:
    return [{"cidr": cidr, **POOL} for cidr in cidrs]


def wait_for_pools(fleet: CapiFleet, cluster: str, cidrs: list[str]) -> Obj:
    release: Obj = eventually(
        lambda: (r := fleet.release(cluster)) is not None and pools(r) == pools_of(cidrs) and r,
        f"{cluster}'s HelmRelease with IP pools {cidrs}",
    )
    return release


def gate(fleet: CapiFleet, cluster: str) -> str | None:
    found = fleet.find(CLUSTER, cluster, WS)
    return (
        None
        if found is None
        else (found["metadata"].get("annotations") or {}).get(ANNOTATION_IMPORT_GATE)
    )


def ready_condition(fleet: CapiFleet, cluster: str) -> dict[str, Any] | None:
    found = fleet.find(CLUSTER, cluster, WS) or {}
    conditions = (found.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Ready"), None)


def shows_gate(fleet: CapiFleet, cluster: str, reason: str) -> bool:
    ready = ready_condition(fleet, cluster)
    return ready is not None and (ready["status"], ready["reason"]) == ("False", reason)


# The manager enforces the gate (no BundleDeployments, Ready=False naming it) once it calls
# bundler.core.capi_import.is_gated in its planning rows and its Cluster status.


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[CapiFleet]:
    built = CapiFleet(tmp_path)
    built.start()
    built.apply_examples()
    yield built
    built.stop()


def test_calico_ip_pools_per_cluster_through_remote_agents(fleet: CapiFleet) -> None:
    for cluster, cidrs in [
        ("eu-west-1", ["192.168.0.0/16"]),
        ("us-east-1", ["10.244.0.0/16", "10.245.0.0/16"]),
    ]:
        release = wait_for_pools(fleet, cluster, cidrs)
        validate(release)
        assert release["spec"]["kubeConfig"] == {
            "secretRef": {"name": f"{cluster}-kubeconfig", "key": "value"}
        }
        assert release["spec"]["targetNamespace"] == "tigera-operator"
    # The gated cluster is imported, shows why it is not ready, and gets nothing.
    assert gate(fleet, "ap-south-1") == ImportGate.CONTROL_PLANE_NOT_INITIALIZED
    assert fleet.deployment("ap-south-1") is None
    eventually(
        lambda: shows_gate(fleet, "ap-south-1", ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
        "ap-south-1 NotReady: ControlPlaneNotInitialized",
    )


def test_a_gated_cluster_gets_calico_once_initialized_and_reachable(fleet: CapiFleet) -> None:
    wait_for_pools(fleet, "eu-west-1", ["192.168.0.0/16"])
    initialized = {"initialization": {"controlPlaneInitialized": True}}
    fleet.store.patch_status(CAPI_CLUSTER, "ap-south-1", {"status": initialized}, WS)
    eventually(
        lambda: gate(fleet, "ap-south-1") == ImportGate.KUBECONFIG_SECRET_MISSING,
        "the kubeconfig gate",
    )
    assert fleet.deployment("ap-south-1") is None
    eventually(
        lambda: shows_gate(fleet, "ap-south-1", ImportGate.KUBECONFIG_SECRET_MISSING),
        "ap-south-1 NotReady: KubeconfigSecretMissing",
    )
    fleet.store.create(SECRET, kubeconfig_secret("ap-south-1", WS))
    wait_for_pools(fleet, "ap-south-1", ["172.16.0.0/16"])


def test_cidr_and_label_changes_reach_the_releases(fleet: CapiFleet) -> None:
    wait_for_pools(fleet, "us-east-1", ["10.244.0.0/16", "10.245.0.0/16"])
    cidrs = ["10.244.0.0/16", "10.246.0.0/16", "10.247.0.0/16"]
    network = {"spec": {"clusterNetwork": {"pods": {"cidrBlocks": cidrs}}}}
    fleet.store.patch(CAPI_CLUSTER, "us-east-1", network, WS)
    wait_for_pools(fleet, "us-east-1", cidrs)

    # eu-west-1 leaves the quick-start class and drops the cni label: no target picks it any more.
    fleet.store.patch(
        CAPI_CLUSTER,
        "eu-west-1",
        {"metadata": {"labels": {"cni": None}}, "spec": {"topology": {"classRef": {"name": "x"}}}},
        WS,
    )
    eventually(lambda: fleet.release("eu-west-1") is None, "eu-west-1's HelmRelease removed")
    eventually(lambda: fleet.deployment("eu-west-1") is None, "eu-west-1's deployment removed")


def test_deleting_capi_clusters_removes_everything_even_when_unreachable(
    fleet: CapiFleet,
) -> None:
    wait_for_pools(fleet, "eu-west-1", ["192.168.0.0/16"])
    wait_for_pools(fleet, "us-east-1", ["10.244.0.0/16", "10.245.0.0/16"])

    fleet.store.delete(CAPI_CLUSTER, "eu-west-1", WS)
    eventually(lambda: fleet.find(CLUSTER, "eu-west-1", WS) is None, "eu-west-1's Cluster gone")
    assert fleet.release("eu-west-1") is None and fleet.deployment("eu-west-1") is None
    namespace = cluster_namespace(WS, "eu-west-1")
    assert fleet.find(NAMESPACE, namespace, None) is None

    # us-east-1 is already unreachable: Flux can never uninstall, its finalizer stays.
    stuck_namespace = delete_unreachable(fleet, "us-east-1")
    assert fleet.find(CLUSTER, "us-east-1", WS) is not None
    force_after_the_bound(fleet, "us-east-1", stuck_namespace)


def delete_unreachable(fleet: CapiFleet, cluster: str) -> str:
    """Delete a CAPI Cluster whose workload cluster Flux cannot reach; wait until the manager
    deleted its cluster namespace, which Flux's finalizers hold. Returns that namespace."""
    # Stopped before it finalizes the release, Flux would hold nothing and the Cluster could go
    # at once, before the test gets to act on it while it is deleting.
    eventually(
        lambda: (
            FLUX_FINALIZER
            in ((fleet.release(cluster) or {}).get("metadata") or {}).get("finalizers", [])
        ),
        f"{cluster}'s HelmRelease finalized by Flux",
    )
    fleet.flux.stop()
    fleet.store.delete(CAPI_CLUSTER, cluster, WS)
    namespace = cluster_namespace(WS, cluster)
    eventually(
        lambda: (
            (ns := fleet.find(NAMESPACE, namespace, None)) is None
            or ns["metadata"].get("deletionTimestamp")
        ),
        f"{cluster}'s namespace terminating",
    )
    return namespace


def force_after_the_bound(fleet: CapiFleet, cluster: str, namespace: str) -> None:
    # The cleanup starts its bound when it first sees the deletion and asks to look again once
    # the rest of it has passed, by the clock as it reads it then: either can fall just after one
    # advance. Time goes on passing, as it would, until the Cluster is gone.
    def gone_after_the_bound() -> bool:
        fleet.capi_clock.advance(CLEANUP_BOUND + 1)
        return fleet.find(CLUSTER, cluster, WS) is None

    eventually(gone_after_the_bound, f"{cluster}'s Cluster gone")
    eventually(
        lambda: fleet.find(NAMESPACE, namespace, None) is None, f"{cluster}'s namespace gone"
    )


def test_an_agent_pointing_status_namespace_at_kube_system_never_gets_it_deleted(
    fleet: CapiFleet,
) -> None:
    fleet.store.create(NAMESPACE, {"metadata": {"name": "kube-system"}})
    wait_for_pools(fleet, "us-east-1", ["10.244.0.0/16", "10.245.0.0/16"])
    namespace = delete_unreachable(fleet, "us-east-1")
    # The agent may write its Cluster's status; the manager no longer restores a deleting one's.
    tampered = {"status": {"namespace": "kube-system"}}
    fleet.store.patch_status(CLUSTER, "us-east-1", tampered, WS)

    force_after_the_bound(fleet, "us-east-1", namespace)
    kube_system = fleet.find(NAMESPACE, "kube-system", None)
    assert kube_system is not None and not kube_system["metadata"].get("deletionTimestamp")
