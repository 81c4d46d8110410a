"""The pure import: which CAPI Clusters are imported, the Cluster each becomes, its gate, and the
ClusterGroups per ClusterClass. Every CAPI object here validates against the upstream CRD schema."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.cluster import AgentMode, Cluster, ClusterGroup
from bundler.core.capi_import import (
    ImportGate,
    ImportMode,
    capi_gate,
    capi_owner,
    class_groups,
    cluster_of_kubeconfig_secret,
    gate_message,
    imported_cluster,
    is_gated,
    kubeconfig_present,
    should_import,
)
from bundler.core.labels import (
    ANNOTATION_AGENT_MODE,
    ANNOTATION_IMPORT_GATE,
    LABEL_CLUSTER_CLASS,
    LABEL_IMPORT,
    LABEL_MANAGED_BY,
    MANAGED_BY_CAPI_IMPORT,
)
from bundler.core.naming import DNS1123_LABEL_MAX
from bundler.errors import InvalidInputError
from tests.support.capi.capi_objects import WS, Version, capi_cluster, with_status

UID = "5c1c7a64-2f3a-4bfa-9a55-6f3c3b0a2d11"
BOTH = pytest.mark.parametrize("version", list(Version), ids=[v.value for v in Version])


def served(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as the API server returns it: server metadata filled in."""
    meta = obj["metadata"]
    meta.update(
        uid=UID,
        resourceVersion="42",
        generation=3,
        creationTimestamp="2024-01-01T00:00:00Z",
        managedFields=[{"manager": "capi", "operation": "Update"}],
    )
    return obj


@BOTH
def test_an_imported_cluster_mirrors_its_capi_cluster(version: Version) -> None:
    capi = served(
        capi_cluster(
            "eu-1",
            version,
            labels={"region": "eu"},
            pods=["10.244.0.0/16"],
            cluster_class="quick-start",
            initialized=True,
        )
    )
    obj = imported_cluster(capi, kubeconfig_present=True)
    cluster = Cluster.model_validate(obj)
    assert (cluster.metadata.namespace, cluster.metadata.name) == (WS, "eu-1")
    assert cluster.metadata.labels == {
        LABEL_IMPORT: "true",
        "region": "eu",
        LABEL_CLUSTER_CLASS: "quick-start",
    }
    assert cluster.metadata.ownerReferences == [
        {
            "apiVersion": f"cluster.x-k8s.io/{version.value}",
            "kind": "Cluster",
            "name": "eu-1",
            "uid": UID,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert capi_owner(obj) == cluster.metadata.ownerReferences[0]
    assert cluster.metadata.annotations == {}
    assert is_gated(cluster) is None
    assert cluster.spec.kubeConfigSecret == "eu-1-kubeconfig"
    assert cluster.spec.agentMode is AgentMode.REMOTE
    values = cluster.spec.values["Cluster"]
    assert "status" not in values
    assert set(values["metadata"]) == {
        "name",
        "namespace",
        "labels",
        "generation",
        "creationTimestamp",
    }
    # Both versions read through v1beta2's spelling: v1beta1 also gets topology.classRef.
    assert values["spec"]["topology"]["classRef"] == {"name": "quick-start"}
    unchanged = {k: v for k, v in values["spec"].items() if k != "topology"}
    assert unchanged == {k: v for k, v in capi["spec"].items() if k != "topology"}
    assert values["spec"]["clusterNetwork"]["pods"]["cidrBlocks"] == ["10.244.0.0/16"]


@pytest.mark.parametrize(
    ("version", "initialized", "kubeconfig", "gate"),
    [
        (Version.V1BETA2, None, True, ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
        (Version.V1BETA2, False, True, ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
        (Version.V1BETA2, False, False, ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
        (Version.V1BETA2, True, False, ImportGate.KUBECONFIG_SECRET_MISSING),
        (Version.V1BETA2, True, True, None),
        (Version.V1BETA1, None, True, ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
        (Version.V1BETA1, False, True, ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
        (Version.V1BETA1, True, False, ImportGate.KUBECONFIG_SECRET_MISSING),
        (Version.V1BETA1, True, True, None),
    ],
    ids=[
        "v1beta2-new-cluster",
        "v1beta2-provisioning",
        "v1beta2-provisioning-no-kubeconfig",
        "v1beta2-no-kubeconfig",
        "v1beta2-open",
        "v1beta1-new-cluster",
        "v1beta1-provisioning",
        "v1beta1-no-kubeconfig",
        "v1beta1-open",
    ],
)
def test_the_gate_says_what_holds_deployments_back(
    version: Version, initialized: bool | None, kubeconfig: bool, gate: ImportGate | None
) -> None:
    capi = served(capi_cluster("c", version, initialized=initialized))
    assert capi_gate(capi, kubeconfig) == gate
    cluster = Cluster.model_validate(imported_cluster(capi, kubeconfig_present=kubeconfig))
    assert is_gated(cluster) == (gate.value if gate else None)
    annotations = cluster.metadata.annotations
    assert annotations == ({ANNOTATION_IMPORT_GATE: gate.value} if gate else {})


def test_the_v1beta2_readiness_field_does_not_count_in_v1beta1() -> None:
    # A v1beta1 object reports readiness in status.controlPlaneReady only.
    capi = with_status(capi_cluster("c", Version.V1BETA1), {"controlPlaneReady": False})
    assert capi_gate(capi, True) is ImportGate.CONTROL_PLANE_NOT_INITIALIZED


@pytest.mark.parametrize(
    ("reason", "fragment"),
    [
        (ImportGate.CONTROL_PLANE_NOT_INITIALIZED, "control plane is not initialized"),
        (ImportGate.KUBECONFIG_SECRET_MISSING, f"Secret {WS}/c-kubeconfig (key 'value')"),
        ("SomethingElse", "'SomethingElse'"),
    ],
    ids=["control-plane", "kubeconfig", "unknown-reason"],
)
def test_gate_messages_name_the_gate(reason: str, fragment: str) -> None:
    capi = served(capi_cluster("c", initialized=False))
    cluster = Cluster.model_validate(imported_cluster(capi, kubeconfig_present=False))
    assert fragment in gate_message(reason, cluster)


@pytest.mark.parametrize(
    ("mode", "capi_labels", "namespace_labels", "imported"),
    [
        (ImportMode.LABELED, {LABEL_IMPORT: "true"}, {}, True),
        (ImportMode.LABELED, {}, {LABEL_IMPORT: "true"}, True),
        (ImportMode.LABELED, {}, {}, False),
        (ImportMode.LABELED, {LABEL_IMPORT: "yes"}, {}, False),
        (ImportMode.LABELED, {LABEL_IMPORT: "false"}, {LABEL_IMPORT: "true"}, False),
        (ImportMode.ALL, {}, {}, True),
        (ImportMode.ALL, {LABEL_IMPORT: "false"}, {}, False),
        (ImportMode.OFF, {LABEL_IMPORT: "true"}, {LABEL_IMPORT: "true"}, False),
    ],
    ids=[
        "labeled-cluster",
        "labeled-namespace",
        "labeled-nothing",
        "labeled-other-value",
        "cluster-opts-out-of-namespace",
        "all",
        "all-but-opted-out",
        "off",
    ],
)
def test_which_clusters_are_imported(
    mode: ImportMode,
    capi_labels: dict[str, str],
    namespace_labels: dict[str, str],
    imported: bool,
) -> None:
    assert should_import(mode, capi_labels, namespace_labels) is imported


@BOTH
def test_a_cluster_without_a_class_gets_no_class_label(version: Version) -> None:
    capi = served(capi_cluster("c", version, labels={LABEL_CLUSTER_CLASS: "forged"}))
    labels = imported_cluster(capi, kubeconfig_present=True)["metadata"]["labels"]
    assert LABEL_CLUSTER_CLASS not in labels


@BOTH
def test_a_long_class_name_is_shortened_into_a_label_value(version: Version) -> None:
    long_class = "a" * 100
    capi = served(capi_cluster("c", version, cluster_class=long_class))
    label = imported_cluster(capi, kubeconfig_present=True)["metadata"]["labels"][
        LABEL_CLUSTER_CLASS
    ]
    assert len(label) == DNS1123_LABEL_MAX and label.startswith("a" * 40)
    (group,) = class_groups([imported_cluster(capi, kubeconfig_present=True)])
    assert len(group["metadata"]["name"]) <= DNS1123_LABEL_MAX
    assert group["spec"]["selector"]["matchLabels"] == {LABEL_CLUSTER_CLASS: label}


def test_a_class_name_that_is_no_kubernetes_name_is_refused() -> None:
    capi = served(capi_cluster("c", Version.V1BETA1, cluster_class="Quick_Start"))
    with pytest.raises(InvalidInputError, match=r"spec\.topology\.class: ClusterClass name"):
        imported_cluster(capi, kubeconfig_present=True)


@pytest.mark.parametrize(
    ("annotation", "mode"),
    [(None, AgentMode.REMOTE), ("pull", AgentMode.PULL), ("remote", AgentMode.REMOTE)],
    ids=["default-remote", "pull", "remote"],
)
def test_the_agent_mode_is_remote_unless_annotated(annotation: str | None, mode: AgentMode) -> None:
    annotations = {ANNOTATION_AGENT_MODE: annotation} if annotation else {}
    capi = served(capi_cluster("c", annotations=annotations))
    cluster = Cluster.model_validate(imported_cluster(capi, kubeconfig_present=True))
    assert cluster.spec.agentMode is mode


def test_an_unknown_agent_mode_is_refused_naming_the_annotation() -> None:
    capi = served(capi_cluster("c", annotations={ANNOTATION_AGENT_MODE: "push"}))
    with pytest.raises(InvalidInputError, match=r"bundler.dev/agent-mode.*'push' is not one of"):
        imported_cluster(capi, kubeconfig_present=True)


def test_offline_documents_without_a_uid_get_no_owner_reference() -> None:
    obj = imported_cluster(capi_cluster("c", initialized=True), kubeconfig_present=True)
    assert "ownerReferences" not in obj["metadata"]
    assert capi_owner(obj) is None


def test_one_cluster_group_per_class_in_use_per_namespace() -> None:
    clusters = [
        imported_cluster(
            served(capi_cluster(name, cluster_class=cls, namespace=ns)), kubeconfig_present=True
        )
        for name, cls, ns in [
            ("a", "quick-start", WS),
            ("b", "quick-start", WS),
            ("c", "gpu", WS),
            ("d", None, WS),
            ("e", "quick-start", "other-ws"),
        ]
    ]
    groups = [ClusterGroup.model_validate(g) for g in class_groups(clusters)]
    assert [(g.metadata.namespace, g.metadata.name) for g in groups] == [
        ("capi-ws", "cluster-class-gpu"),
        ("capi-ws", "cluster-class-quick-start"),
        ("other-ws", "cluster-class-quick-start"),
    ]
    gpu = groups[0]
    assert gpu.spec.selector.matchLabels == {LABEL_CLUSTER_CLASS: "gpu"}
    assert gpu.metadata.labels == {
        LABEL_MANAGED_BY: MANAGED_BY_CAPI_IMPORT,
        LABEL_CLUSTER_CLASS: "gpu",
    }


@pytest.mark.parametrize(
    ("secret", "present"),
    [
        (None, False),
        ({"data": {"value": "YQ=="}}, True),
        ({"stringData": {"value": "apiVersion: v1"}}, True),
        ({"data": {"other": "YQ=="}}, False),
        ({"data": {"value": ""}}, False),
    ],
    ids=["missing", "data", "string-data", "no-value-key", "empty-value"],
)
def test_a_kubeconfig_secret_counts_when_it_holds_a_value(
    secret: dict[str, Any] | None, present: bool
) -> None:
    assert kubeconfig_present(secret) is present


@pytest.mark.parametrize(
    ("secret", "cluster"),
    [("eu-1-kubeconfig", "eu-1"), ("-kubeconfig", None), ("eu-1-ca", None)],
    ids=["kubeconfig", "suffix-only", "other-secret"],
)
def test_kubeconfig_secrets_map_to_their_cluster(secret: str, cluster: str | None) -> None:
    assert cluster_of_kubeconfig_secret(secret) == cluster
