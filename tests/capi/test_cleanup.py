"""Cleanup of deleted imports over the test API server. The manager and Flux are played by the test
(their finalizers, the namespace deletion, the uninstall), so each can be made to hang:

- a deleted import's Cluster stays until its cluster namespace is gone, then goes at once;
- when the workload cluster is unreachable (Flux never uninstalls) or the manager never finishes,
  the deletion is forced after the bound, on the runtime clock;
- hand-registered Clusters and foreign finalizers are never forced.
"""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE_DEPLOYMENT, CAPI_CLUSTER, CLUSTER, HELM_RELEASE, NAMESPACE
from bundler.capi.cleanup import IMPORT_FINALIZER
from bundler.capi.start import CapiImportOptions
from bundler.core.agent.identity import identity_labels
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from tests.support.capi.capi_objects import WS, capi_cluster
from tests.support.capi.cleanup import (
    FLUX_FINALIZER,
    MANAGER_FINALIZER,
    deleting,
    deployed_import,
    helm_release,
)
from tests.support.capi.fleet import Fleet, MakeFleet, create_capi

FOREIGN_FINALIZER = "example.com/keep"
KUBE_SYSTEM = "kube-system"
DEFAULT_BOUND = 600.0
# Well inside the bound, however long the test waited meanwhile.
MARGIN = 10.0


def manager_finalizes(fleet: Fleet, name: str, namespace: str) -> None:
    """What the manager's finalizer does: delete the cluster namespace, drop its finalizer."""
    fleet.store.delete(NAMESPACE, namespace)
    cluster = fleet.store.get(CLUSTER, name, WS)
    kept = [f for f in cluster["metadata"]["finalizers"] if f != MANAGER_FINALIZER]
    fleet.store.patch(CLUSTER, name, {"metadata": {"finalizers": kept}}, WS)


def test_imported_clusters_carry_the_import_finalizer(fleet: Fleet) -> None:
    create_capi(fleet, capi_cluster("eu-1"))
    fleet.wait_until(
        CLUSTER,
        "eu-1",
        lambda c: c["metadata"].get("finalizers") == [IMPORT_FINALIZER],
        "the import finalizer",
    )


def test_the_cluster_goes_once_its_namespace_is_gone(fleet: Fleet) -> None:
    namespace = deployed_import(fleet)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)
    manager_finalizes(fleet, "eu-1", namespace)
    fleet.barrier()
    # Flux has not uninstalled yet: the namespace, and so the Cluster, are still there.
    assert fleet.find(NAMESPACE, namespace, None) is not None
    assert fleet.find(CLUSTER, "eu-1") is not None

    fleet.store.patch(HELM_RELEASE, "calico", {"metadata": {"finalizers": None}}, namespace)
    fleet.wait_gone(NAMESPACE, namespace, None)
    fleet.wait_gone(CLUSTER, "eu-1")


@pytest.mark.parametrize(
    ("timeout", "manager_done"),
    [(DEFAULT_BOUND, True), (60.0, True), (DEFAULT_BOUND, False)],
    ids=["unreachable-default-10-minutes", "unreachable-one-minute", "manager-never-finishes"],
)
def test_a_stuck_deletion_is_forced_after_the_bound(
    make_fleet: MakeFleet, timeout: float, manager_done: bool
) -> None:
    fleet = make_fleet(CapiImportOptions(cleanup_timeout=timeout))
    namespace = deployed_import(fleet)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)
    if manager_done:
        manager_finalizes(fleet, "eu-1", namespace)
        fleet.barrier()

    fleet.clock.advance(timeout - MARGIN)
    fleet.barrier()
    assert fleet.find(CLUSTER, "eu-1") is not None
    assert fleet.find(HELM_RELEASE, "calico", namespace) is not None

    fleet.clock.advance(2 * MARGIN)
    fleet.wait_gone(CLUSTER, "eu-1")
    fleet.wait_gone(BUNDLE_DEPLOYMENT, "calico", namespace)
    fleet.wait_gone(HELM_RELEASE, "calico", namespace)
    fleet.wait_gone(NAMESPACE, namespace, None)


def test_only_bundler_finalizers_are_forced_off_the_cluster(fleet: Fleet) -> None:
    deployed_import(fleet)
    finalizers = [IMPORT_FINALIZER, MANAGER_FINALIZER, FOREIGN_FINALIZER]
    fleet.store.patch(CLUSTER, "eu-1", {"metadata": {"finalizers": finalizers}}, WS)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)
    fleet.clock.advance(DEFAULT_BOUND + MARGIN)
    left = fleet.wait_until(
        CLUSTER,
        "eu-1",
        lambda c: c["metadata"].get("finalizers") == [FOREIGN_FINALIZER],
        "bundler's finalizers removed",
    )
    assert left["metadata"]["deletionTimestamp"]


def test_a_hand_registered_cluster_is_never_forced(fleet: Fleet) -> None:
    hand_made: dict[str, Any] = {
        "metadata": {"name": "own", "namespace": WS, "finalizers": [MANAGER_FINALIZER]}
    }
    fleet.store.create(CLUSTER, hand_made)
    fleet.store.delete(CLUSTER, "own", WS)
    deleting(fleet, "own")
    fleet.clock.advance(DEFAULT_BOUND + MARGIN)
    fleet.barrier()
    kept = fleet.find(CLUSTER, "own")
    assert kept is not None and kept["metadata"]["finalizers"] == [MANAGER_FINALIZER]


def kube_system_with_a_bundler_release(fleet: Fleet) -> None:
    """kube-system as on any cluster, holding a HelmRelease that looks like bundler's."""
    fleet.store.create(NAMESPACE, {"metadata": {"name": KUBE_SYSTEM}})
    fleet.store.create(HELM_RELEASE, helm_release(KUBE_SYSTEM, "eu-1"))


@pytest.mark.parametrize(
    "manager_done", [True, False], ids=["manager-finished", "manager-never-finishes"]
)
def test_a_tampered_status_namespace_never_gets_kube_system_deleted(
    fleet: Fleet, manager_done: bool
) -> None:
    kube_system_with_a_bundler_release(fleet)
    namespace = deployed_import(fleet)
    # The pull agent may write its Cluster's status, status.namespace included.
    fleet.store.patch_status(CLUSTER, "eu-1", {"status": {"namespace": KUBE_SYSTEM}}, WS)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)
    if manager_done:
        manager_finalizes(fleet, "eu-1", namespace)
        fleet.barrier()

    fleet.clock.advance(DEFAULT_BOUND + MARGIN)
    fleet.wait_gone(CLUSTER, "eu-1")
    fleet.wait_gone(NAMESPACE, namespace, None)
    kept = fleet.find(NAMESPACE, KUBE_SYSTEM, None)
    assert kept is not None and not kept["metadata"].get("deletionTimestamp")
    release = fleet.find(HELM_RELEASE, "calico", KUBE_SYSTEM)
    assert release is not None and release["metadata"]["finalizers"] == [FLUX_FINALIZER]


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER},
        {**identity_labels(WS, "eu-1"), LABEL_CLUSTER_NAME: "other"},
        {**identity_labels(WS, "eu-1"), LABEL_CLUSTER_NAMESPACE: "other-ws"},
        {**identity_labels(WS, "eu-1"), LABEL_MANAGED_BY: "someone-else"},
    ],
    ids=[
        "no-labels",
        "no-cluster-labels",
        "another-clusters",
        "another-workspaces",
        "managed-by-someone-else",
    ],
)
def test_a_namespace_without_the_clusters_labels_is_never_touched(
    fleet: Fleet, labels: dict[str, str]
) -> None:
    namespace = deployed_import(fleet)
    fleet.store.patch(NAMESPACE, namespace, {"metadata": {"labels": None}}, None)
    fleet.store.patch(NAMESPACE, namespace, {"metadata": {"labels": labels or None}}, None)
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    deleting(fleet)

    fleet.clock.advance(DEFAULT_BOUND + MARGIN)
    fleet.wait_gone(CLUSTER, "eu-1")
    kept = fleet.find(NAMESPACE, namespace, None)
    assert kept is not None and not kept["metadata"].get("deletionTimestamp")
    assert fleet.find(BUNDLE_DEPLOYMENT, "calico", namespace) is not None
    release = fleet.find(HELM_RELEASE, "calico", namespace)
    assert release is not None and release["metadata"]["finalizers"] == [FLUX_FINALIZER]
