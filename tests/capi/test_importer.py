"""The importer over the test API server: import, gating, label and CIDR propagation, import modes,
deletion, and one ClusterGroup per ClusterClass, for both served CAPI versions."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.cluster import Cluster
from bundler.api.resources import (
    ALL_KINDS,
    CAPI_CLUSTER,
    CAPI_CLUSTER_V1BETA1,
    CAPI_KINDS,
    CLUSTER,
    CLUSTER_GROUP,
    NAMESPACE,
    SECRET,
)
from bundler.capi.start import CapiImportOptions
from bundler.core.capi_import import ImportGate, ImportMode, is_gated, unified
from bundler.core.labels import (
    ANNOTATION_IMPORT_GATE,
    LABEL_CLUSTER_CLASS,
    LABEL_IMPORT,
    LABEL_MANAGED_BY,
    MANAGED_BY_CAPI_IMPORT,
)
from bundler.store.protocol import Obj
from tests.support.capi.capi_objects import (
    WS,
    Version,
    capi_cluster,
    control_plane_status,
    kubeconfig_secret,
)
from tests.support.capi.fleet import Fleet, MakeFleet, create_capi

WITHOUT_V1BETA2 = tuple(r for r in ALL_KINDS if r != CAPI_CLUSTER)


def fleet_serving(make_fleet: MakeFleet, version: Version, **kwargs: Any) -> Fleet:
    """An importer over a server that serves `version` (v1beta1: the only CAPI version served)."""
    resources = ALL_KINDS if version is Version.V1BETA2 else WITHOUT_V1BETA2
    return make_fleet(resources=resources, **kwargs)


def gate_of(cluster: Obj) -> str | None:
    return (cluster["metadata"].get("annotations") or {}).get(ANNOTATION_IMPORT_GATE)


BOTH = pytest.mark.parametrize("version", list(Version), ids=[v.value for v in Version])


@BOTH
def test_an_initialized_capi_cluster_becomes_an_open_cluster(
    make_fleet: MakeFleet, version: Version
) -> None:
    fleet = fleet_serving(make_fleet, version)
    assert fleet.importer is not None and fleet.importer.resource == version.resource
    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    capi = create_capi(
        fleet,
        capi_cluster(
            "eu-1", version, labels={"env": "prod"}, cluster_class="quick-start", initialized=True
        ),
        version.resource,
    )
    # The importer may see the CAPI cluster before the kubeconfig Secret: gated first, then open.
    obj = fleet.wait_until(CLUSTER, "eu-1", lambda c: gate_of(c) is None, "the gate to open")
    cluster = Cluster.model_validate(obj)
    assert cluster.metadata.labels == {
        LABEL_IMPORT: "true",
        "env": "prod",
        LABEL_CLUSTER_CLASS: "quick-start",
    }
    (owner,) = cluster.metadata.ownerReferences
    assert owner["uid"] == capi["metadata"]["uid"] and owner["controller"] is True
    assert owner["apiVersion"] == version.resource.api_version
    assert is_gated(cluster) is None
    assert cluster.spec.kubeConfigSecret == "eu-1-kubeconfig"
    assert cluster.spec.agentMode.value == "remote"
    values = cluster.spec.values["Cluster"]
    assert values["spec"] == unified(capi)["spec"]  # v1beta2's spellings added to v1beta1
    assert "status" not in values
    assert not {"uid", "resourceVersion", "managedFields"} & set(values["metadata"])


@BOTH
def test_the_gate_holds_until_control_plane_and_kubeconfig_are_there(
    make_fleet: MakeFleet, version: Version
) -> None:
    fleet = fleet_serving(make_fleet, version)
    res = version.resource
    create_capi(fleet, capi_cluster("eu-1", version), res)
    obj = fleet.wait_for(CLUSTER, "eu-1")
    assert gate_of(obj) == ImportGate.CONTROL_PLANE_NOT_INITIALIZED

    fleet.store.patch_status(res, "eu-1", {"status": control_plane_status(version, True)}, WS)
    fleet.wait_until(
        CLUSTER,
        "eu-1",
        lambda c: gate_of(c) == ImportGate.KUBECONFIG_SECRET_MISSING,
        "the kubeconfig gate",
    )

    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    fleet.wait_until(CLUSTER, "eu-1", lambda c: gate_of(c) is None, "the gate to open")

    fleet.store.delete(SECRET, "eu-1-kubeconfig", WS)
    fleet.wait_until(
        CLUSTER,
        "eu-1",
        lambda c: gate_of(c) == ImportGate.KUBECONFIG_SECRET_MISSING,
        "the gate to close again",
    )


@BOTH
def test_label_and_cidr_changes_reach_the_cluster(make_fleet: MakeFleet, version: Version) -> None:
    fleet = fleet_serving(make_fleet, version)
    res = version.resource
    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    create_capi(
        fleet, capi_cluster("eu-1", version, labels={"tier": "gold"}, initialized=True), res
    )
    fleet.wait_for(CLUSTER, "eu-1")
    # Fields the importer does not own survive its updates.
    fleet.store.patch(CLUSTER, "eu-1", {"spec": {"paused": True}}, WS)

    fleet.store.patch(
        res, "eu-1", {"metadata": {"labels": {"tier": "silver", "cni": "calico"}}}, WS
    )
    obj = fleet.wait_until(
        CLUSTER,
        "eu-1",
        lambda c: c["metadata"]["labels"].get("cni") == "calico",
        "the new labels",
    )
    assert obj["metadata"]["labels"] == {LABEL_IMPORT: "true", "tier": "silver", "cni": "calico"}

    cidrs = ["10.10.0.0/16", "10.11.0.0/16"]
    fleet.store.patch(
        res, "eu-1", {"spec": {"clusterNetwork": {"pods": {"cidrBlocks": cidrs}}}}, WS
    )
    obj = fleet.wait_until(
        CLUSTER,
        "eu-1",
        lambda c: (
            c["spec"]["values"]["Cluster"]["spec"]["clusterNetwork"]["pods"]["cidrBlocks"] == cidrs
        ),
        "the new pod CIDRs",
    )
    assert obj["spec"]["paused"] is True


def test_labels_written_on_the_cluster_are_put_back(fleet: Fleet) -> None:
    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    create_capi(fleet, capi_cluster("eu-1", labels={"env": "prod"}, initialized=True))
    fleet.wait_for(CLUSTER, "eu-1")
    fleet.store.patch(CLUSTER, "eu-1", {"metadata": {"labels": {"env": "dev"}}}, WS)
    fleet.wait_until(
        CLUSTER, "eu-1", lambda c: c["metadata"]["labels"]["env"] == "prod", "the label restored"
    )


@pytest.mark.parametrize(
    ("annotations", "mode"),
    [({}, "remote"), ({"bundler.dev/bootstrap-mode": "pull"}, "pull")],
    ids=["importer-owns-the-mode", "bootstrap-switched-mode-is-kept"],
)
def test_the_agent_mode_is_put_back_unless_the_bootstrap_switched_it(
    fleet: Fleet, annotations: dict[str, str], mode: str
) -> None:
    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    create_capi(fleet, capi_cluster("eu-1", initialized=True))
    fleet.wait_for(CLUSTER, "eu-1")
    patch = {"metadata": {"annotations": annotations, "labels": {"env": "x"}}}
    fleet.store.patch(CLUSTER, "eu-1", {**patch, "spec": {"agentMode": "pull"}}, WS)
    fleet.wait_until(
        CLUSTER, "eu-1", lambda c: "env" not in c["metadata"]["labels"], "the importer's pass"
    )
    found = fleet.find(CLUSTER, "eu-1")
    assert found is not None and found["spec"]["agentMode"] == mode


def test_nothing_is_written_when_nothing_changed(fleet: Fleet) -> None:
    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    create_capi(fleet, capi_cluster("eu-1", initialized=True))
    before = fleet.wait_until(CLUSTER, "eu-1", lambda c: gate_of(c) is None, "the open Cluster")
    fleet.settle()
    fleet.server.reset_counts()
    # Status is not part of values: a new phase wakes the importer but changes nothing.
    fleet.store.patch_status(CAPI_CLUSTER, "eu-1", {"status": {"phase": "Provisioned"}}, WS)
    # A cluster created in its final state (no status to add later) is written once.
    create_capi(fleet, capi_cluster("marker"))
    fleet.wait_for(CLUSTER, "marker")
    fleet.settle()
    counts = fleet.server.request_counts()
    assert counts["update"] == 0 and counts["patch"] == 0, counts
    after = fleet.find(CLUSTER, "eu-1")
    assert after is not None
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("mode", "namespace_labels", "imported"),
    [
        (ImportMode.LABELED, {}, {"labelled"}),
        (ImportMode.LABELED, {LABEL_IMPORT: "true"}, {"labelled", "unlabelled"}),
        (ImportMode.ALL, {}, {"labelled", "unlabelled"}),
    ],
    ids=["labeled", "labeled-namespace", "all"],
)
def test_import_modes(
    make_fleet: MakeFleet,
    mode: ImportMode,
    namespace_labels: dict[str, str],
    imported: set[str],
) -> None:
    fleet = make_fleet(CapiImportOptions(mode=mode), namespaces={WS: namespace_labels})
    create_capi(fleet, capi_cluster("unlabelled", imported=False, initialized=True))
    create_capi(fleet, capi_cluster("opted-out", labels={LABEL_IMPORT: "false"}))
    create_capi(fleet, capi_cluster("labelled", initialized=True))
    fleet.wait_for(CLUSTER, "labelled")
    fleet.settle()
    names = {c["metadata"]["name"] for c in fleet.store.list(CLUSTER, WS).items}
    assert names == imported


def test_labelling_the_namespace_imports_and_unlabelling_releases(fleet: Fleet) -> None:
    create_capi(fleet, capi_cluster("eu-1", imported=False, initialized=True))
    fleet.store.patch(NAMESPACE, WS, {"metadata": {"labels": {LABEL_IMPORT: "true"}}})
    fleet.wait_for(CLUSTER, "eu-1")
    fleet.store.patch(NAMESPACE, WS, {"metadata": {"labels": {LABEL_IMPORT: None}}})
    fleet.wait_gone(CLUSTER, "eu-1")


def test_mode_off_and_servers_without_cluster_api_get_no_importer(
    make_fleet: MakeFleet, caplog: pytest.LogCaptureFixture
) -> None:
    assert make_fleet(CapiImportOptions(mode=ImportMode.OFF)).importer is None
    no_capi = tuple(r for r in ALL_KINDS if r not in CAPI_KINDS)
    assert make_fleet(resources=no_capi).importer is None
    # With the import on, the missing Cluster API CRD is a warning in the user's terms.
    (warning,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "serves no Cluster API Cluster kind (clusters.cluster.x-k8s.io)" in warning.message


def test_v1beta2_is_preferred_when_both_are_served(fleet: Fleet) -> None:
    assert fleet.importer is not None
    assert fleet.importer.resource == CAPI_CLUSTER != CAPI_CLUSTER_V1BETA1


def test_a_cluster_registered_by_hand_is_left_alone(fleet: Fleet) -> None:
    hand_made = {"metadata": {"name": "eu-1", "namespace": WS, "labels": {"own": "yes"}}}
    fleet.store.create(CLUSTER, hand_made)
    create_capi(fleet, capi_cluster("eu-1", initialized=True))
    create_capi(fleet, capi_cluster("marker", initialized=True))
    fleet.wait_for(CLUSTER, "marker")
    fleet.settle()
    kept = fleet.find(CLUSTER, "eu-1")
    assert kept is not None and kept["metadata"]["labels"] == {"own": "yes"}
    assert "ownerReferences" not in kept["metadata"]
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    create_capi(fleet, capi_cluster("marker-2", initialized=True))
    fleet.wait_for(CLUSTER, "marker-2")
    fleet.settle()
    assert fleet.find(CLUSTER, "eu-1") is not None


@BOTH
def test_deleting_the_capi_cluster_deletes_the_cluster(
    make_fleet: MakeFleet, version: Version
) -> None:
    fleet = fleet_serving(make_fleet, version)
    create_capi(fleet, capi_cluster("eu-1", version, initialized=True), version.resource)
    fleet.wait_for(CLUSTER, "eu-1")
    fleet.store.delete(version.resource, "eu-1", WS)
    fleet.wait_gone(CLUSTER, "eu-1")


def test_a_capi_cluster_being_deleted_releases_its_cluster_at_once(fleet: Fleet) -> None:
    # CAPI's own finalizer keeps the CAPI Cluster while it tears the machines down; the Cluster
    # goes right away, while the workload cluster can still uninstall releases.
    capi = capi_cluster("eu-1", initialized=True, finalizers=["cluster.cluster.x-k8s.io"])
    create_capi(fleet, capi)
    fleet.wait_for(CLUSTER, "eu-1")
    fleet.store.delete(CAPI_CLUSTER, "eu-1", WS)
    fleet.wait_gone(CLUSTER, "eu-1")
    assert fleet.find(CAPI_CLUSTER, "eu-1") is not None


def class_groups_in(fleet: Fleet) -> dict[str, dict[str, str]]:
    return {
        g["metadata"]["name"]: g["spec"]["selector"]["matchLabels"]
        for g in fleet.store.list(CLUSTER_GROUP, WS).items
    }


def test_one_cluster_group_per_class_in_use(fleet: Fleet) -> None:
    create_capi(fleet, capi_cluster("a", cluster_class="quick-start"))
    create_capi(fleet, capi_cluster("b", Version.V1BETA2, cluster_class="quick-start"))
    create_capi(fleet, capi_cluster("c", cluster_class="gpu"))
    create_capi(fleet, capi_cluster("d"))
    expected = {
        "cluster-class-quick-start": {LABEL_CLUSTER_CLASS: "quick-start"},
        "cluster-class-gpu": {LABEL_CLUSTER_CLASS: "gpu"},
    }
    fleet.eventually(lambda: class_groups_in(fleet) == expected, "a group per class")
    group = fleet.find(CLUSTER_GROUP, "cluster-class-gpu")
    assert group is not None
    assert group["metadata"]["labels"][LABEL_MANAGED_BY] == MANAGED_BY_CAPI_IMPORT

    # c moves to quick-start: gpu is no longer in use.
    fleet.store.patch(
        CAPI_CLUSTER, "c", {"spec": {"topology": {"classRef": {"name": "quick-start"}}}}, WS
    )
    fleet.eventually(
        lambda: set(class_groups_in(fleet)) == {"cluster-class-quick-start"}, "gpu group removed"
    )
    for name in ("a", "b", "c"):
        fleet.store.delete(CAPI_CLUSTER, name, WS)
    fleet.eventually(lambda: class_groups_in(fleet) == {}, "every class group removed")


def test_a_hand_made_group_of_a_class_group_name_is_kept(fleet: Fleet) -> None:
    mine = {
        "metadata": {"name": "cluster-class-gpu", "namespace": WS},
        "spec": {"selector": {"matchLabels": {"hand": "made"}}},
    }
    fleet.store.create(CLUSTER_GROUP, mine)
    create_capi(fleet, capi_cluster("c", cluster_class="gpu"))
    create_capi(fleet, capi_cluster("d", cluster_class="other"))
    fleet.wait_for(CLUSTER_GROUP, "cluster-class-other")
    fleet.settle()
    kept = fleet.find(CLUSTER_GROUP, "cluster-class-gpu")
    assert kept is not None and kept["spec"]["selector"] == {"matchLabels": {"hand": "made"}}
    fleet.store.delete(CAPI_CLUSTER, "c", WS)
    fleet.store.delete(CAPI_CLUSTER, "d", WS)
    fleet.wait_gone(CLUSTER_GROUP, "cluster-class-other")
    assert fleet.find(CLUSTER_GROUP, "cluster-class-gpu") is not None
