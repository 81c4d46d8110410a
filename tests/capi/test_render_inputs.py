"""The offline import (`bundler render` inputs): CAPI Cluster, Secret and Namespace documents become
the Clusters and class ClusterGroups the manager's importer would write, gated the same way, and
the examples/capi Calico bundle gets IP pools built from each cluster's pod CIDRs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode, Cluster, ClusterGroup
from bundler.api.documents import Document, split_documents
from bundler.capi.render_inputs import ImportedInputs, import_documents, is_capi_input
from bundler.commands.render import agent_config
from bundler.core.capi_import import ImportGate, ImportMode, is_gated
from bundler.core.flux.helm_objects import build_flux_objects
from bundler.core.labels import LABEL_CLUSTER_CLASS, LABEL_IMPORT
from bundler.core.planning import plan_bundle
from bundler.errors import InvalidInputError
from tests.support.builders import helm_of
from tests.support.capi.capi_objects import WS, Version, capi_cluster, kubeconfig_secret
from tests.support.schemas import validate

EXAMPLE = Path(__file__).parents[2] / "examples" / "capi"
EXAMPLE_WS = "capi-workloads"
POOL = {"encapsulation": "VXLAN", "natOutgoing": "Enabled", "nodeSelector": "all()"}


# A v1 ConfigMap of the inputs (what a Bundle's valuesFrom with source: Management may name).
CONFIG_MAP: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def docs(*bodies: dict[str, Any]) -> list[Document]:
    # As if each document were 10 lines long, so that the document's first line is told apart.
    return [
        Document("inputs.yaml", index, body, line=10 * index + 1)
        for index, body in enumerate(bodies)
    ]


def credentials_secret(name: str, namespace: str | None = WS) -> dict[str, Any]:
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": "kubernetes.io/basic-auth",
        "stringData": {"username": "u", "password": "p"},
    }


def example_documents() -> tuple[list[Document], list[Bundle]]:
    capi: list[Document] = []
    bundles: list[Bundle] = []
    for path in sorted(EXAMPLE.glob("*.yaml")):
        for doc in split_documents(path.read_text(encoding="utf-8"), str(path)):
            if is_capi_input(doc.body):
                capi.append(doc)
            else:
                bundles.append(Bundle.model_validate(doc.body))
    return capi, bundles


def by_name(imported: ImportedInputs) -> dict[str, Cluster]:
    return {c.metadata.name: c for c in imported.clusters}


@pytest.mark.parametrize(
    ("body", "accepted"),
    [
        (capi_cluster("a"), True),
        (capi_cluster("a", Version.V1BETA1), True),
        (kubeconfig_secret("a"), True),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WS}}, True),
        ({"apiVersion": "bundler.dev/v1alpha1", "kind": "Cluster"}, False),
        ({"apiVersion": "v1", "kind": "ConfigMap"}, True),
        ({"apiVersion": "v1", "kind": "Service"}, False),
    ],
    ids=["v1beta2", "v1beta1", "secret", "namespace", "bundler-cluster", "configmap", "service"],
)
def test_which_documents_the_import_takes(body: dict[str, Any], accepted: bool) -> None:
    assert is_capi_input(body) is accepted


def test_the_examples_are_valid_cluster_api_objects() -> None:
    capi, _ = example_documents()
    clusters = [d.body for d in capi if d.body["kind"] == "Cluster"]
    assert {c["apiVersion"] for c in clusters} == {
        "cluster.x-k8s.io/v1beta1",
        "cluster.x-k8s.io/v1beta2",
    }
    for cluster in clusters:
        validate(cluster)


def test_the_examples_import_with_their_gates_and_class_group() -> None:
    capi, _ = example_documents()
    imported = import_documents(capi)
    clusters = by_name(imported)
    assert sorted(clusters) == ["ap-south-1", "eu-west-1", "us-east-1"]
    assert is_gated(clusters["ap-south-1"]) == ImportGate.CONTROL_PLANE_NOT_INITIALIZED
    assert is_gated(clusters["eu-west-1"]) is None and is_gated(clusters["us-east-1"]) is None
    for cluster in clusters.values():
        assert cluster.spec.agentMode is AgentMode.REMOTE
        assert cluster.spec.kubeConfigSecret == f"{cluster.metadata.name}-kubeconfig"
    assert clusters["us-east-1"].metadata.labels[LABEL_CLUSTER_CLASS] == "quick-start"
    assert [(g.metadata.namespace, g.metadata.name) for g in imported.groups] == [
        (EXAMPLE_WS, "cluster-class-quick-start")
    ]


def test_calico_gets_an_ip_pool_per_pod_cidr_of_each_open_cluster() -> None:
    capi, bundles = example_documents()
    imported = import_documents(capi)
    (calico,) = bundles
    plan = plan_bundle(calico, imported.clusters, imported.groups)
    assert not plan.errors
    pools = {
        d.cluster: (helm_of(d.options).values or {})["installation"]["calicoNetwork"]["ipPools"]
        for d in plan.deployments
    }
    assert pools == {
        f"{EXAMPLE_WS}/eu-west-1": [{"cidr": "192.168.0.0/16", **POOL}],
        f"{EXAMPLE_WS}/us-east-1": [
            {"cidr": "10.244.0.0/16", **POOL},
            {"cidr": "10.245.0.0/16", **POOL},
        ],
    }


def test_remote_flux_objects_use_the_kubeconfig_secret() -> None:
    capi, bundles = example_documents()
    imported = import_documents(capi)
    clusters = {f"{EXAMPLE_WS}/{c.metadata.name}": c for c in imported.clusters}
    plan = plan_bundle(bundles[0], imported.clusters, imported.groups)
    for planned in plan.deployments:
        bd = BundleDeployment.model_validate(planned.to_object())
        target = agent_config(clusters[planned.cluster]).target()
        release = build_flux_objects(bd, target).release
        validate(release)
        name = clusters[planned.cluster].metadata.name
        assert release["spec"]["kubeConfig"]["secretRef"]["name"] == f"{name}-kubeconfig"
        assert release["metadata"]["namespace"] == planned.namespace


@pytest.mark.parametrize(
    ("inputs", "gate"),
    [
        ((capi_cluster("a", initialized=True), kubeconfig_secret("a")), None),
        ((capi_cluster("a", initialized=True),), ImportGate.KUBECONFIG_SECRET_MISSING),
        ((capi_cluster("a", initialized=True), kubeconfig_secret("b")), "missing"),
        ((capi_cluster("a"), kubeconfig_secret("a")), ImportGate.CONTROL_PLANE_NOT_INITIALIZED),
    ],
    ids=["open", "no-secret", "other-cluster-secret", "not-initialized"],
)
def test_the_offline_gate_matches_the_manager(
    inputs: tuple[dict[str, Any], ...], gate: str | None
) -> None:
    (cluster,) = import_documents(docs(*inputs)).clusters
    expected = ImportGate.KUBECONFIG_SECRET_MISSING if gate == "missing" else gate
    assert is_gated(cluster) == expected


def test_the_import_mode_and_namespace_labels_apply_offline() -> None:
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "opted-in", "labels": {LABEL_IMPORT: "true"}},
    }
    inputs = docs(
        capi_cluster("labelled"),
        capi_cluster("unlabelled", imported=False),
        capi_cluster("in-labelled-namespace", namespace="opted-in", imported=False),
        namespace,
    )
    names = {c.metadata.name for c in import_documents(inputs).clusters}
    assert names == {"labelled", "in-labelled-namespace"}
    everything = import_documents(inputs, mode=ImportMode.ALL).clusters
    assert len(everything) == 3
    assert import_documents(inputs, mode=ImportMode.OFF).clusters == ()


def test_hand_written_clusters_and_groups_win() -> None:
    inputs = docs(capi_cluster("a", cluster_class="gpu"), capi_cluster("b", cluster_class="gpu"))
    own_cluster = Cluster.model_validate({"metadata": {"name": "a", "namespace": WS}})
    own_group = ClusterGroup.model_validate(
        {
            "metadata": {"name": "cluster-class-gpu", "namespace": WS},
            "spec": {"selector": {"matchLabels": {"hand": "made"}}},
        }
    )
    imported = import_documents(inputs, clusters=[own_cluster], groups=[own_group])
    assert [c.metadata.name for c in imported.clusters] == ["b"]
    assert imported.groups == ()


def test_a_missing_namespace_defaults_like_other_inputs() -> None:
    body = capi_cluster("a", initialized=True)
    del body["metadata"]["namespace"]
    (cluster,) = import_documents(docs(body)).clusters
    assert cluster.metadata.namespace == "default"


@pytest.mark.parametrize(
    ("bodies", "message"),
    [
        (
            [{**capi_cluster("a"), "apiVersion": "cluster.x-k8s.io/v1alpha4"}],
            r"inputs.yaml:1: apiVersion: unsupported apiVersion 'cluster.x-k8s.io/v1alpha4'",
        ),
        (
            [capi_cluster("a"), capi_cluster("a", Version.V1BETA1)],
            r"inputs.yaml:11: metadata.name: "
            r"CAPI Cluster capi-ws/a is also defined at inputs.yaml:1",
        ),
        (
            [{"apiVersion": "v1", "kind": "Secret", "metadata": {}}],
            r"inputs.yaml:1: metadata.name: required field is missing",
        ),
        (
            [capi_cluster("a", Version.V1BETA1, cluster_class="Not_A_Name")],
            r"inputs.yaml:1: spec.topology.class: ClusterClass name 'Not_A_Name'",
        ),
        (
            [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}}],
            r"inputs.yaml:1: kind: not a Cluster API input",
        ),
        (
            [{**credentials_secret("creds"), "type": 5}],
            r"inputs.yaml:1: type: must be a string, got a number",
        ),
        (
            [{**credentials_secret("creds"), "stringData": {"user name": "u"}}],
            r"inputs.yaml:1: stringData: key 'user name' must be at most 253 letters",
        ),
        (
            [{**credentials_secret("creds"), "data": {"..x": "dQ=="}}],
            r"inputs.yaml:1: data: key '..x' must be .* nor start with '..'",
        ),
        (
            [{**credentials_secret("creds"), "data": {"password": "not base64!"}}],
            r"inputs.yaml:1: data.password: is not valid base64",
        ),
        (
            [credentials_secret("Not_A_Name")],
            r"inputs.yaml:1: metadata.name: 'Not_A_Name' is not a valid",
        ),
        (
            [{**CONFIG_MAP, "data": {"values.yaml": 5}}],
            r"inputs.yaml:1: data: must map strings to strings",
        ),
        (
            [{**CONFIG_MAP, "binaryData": {"blob": "not base64!"}}],
            r"inputs.yaml:1: binaryData.blob: is not valid base64",
        ),
        (
            [{**CONFIG_MAP, "data": {"a b": "x"}}],
            r"inputs.yaml:1: data: key 'a b' must be at most 253 letters",
        ),
    ],
    ids=[
        "old-version",
        "duplicate",
        "no-name",
        "bad-class",
        "other-kind",
        "secret-type-number",
        "secret-key-space",
        "secret-key-dotdot",
        "secret-data-not-base64",
        "secret-bad-name",
        "configmap-data-not-text",
        "configmap-binary-not-base64",
        "configmap-key-space",
    ],
)
def test_bad_inputs_name_the_document_and_field(bodies: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        import_documents(docs(*bodies))


def test_every_secret_is_handed_back_in_input_order() -> None:
    inputs = docs(
        credentials_secret("creds"),
        capi_cluster("a", initialized=True),
        kubeconfig_secret("a"),
        credentials_secret("elsewhere", namespace=None),
    )
    imported = import_documents(inputs)
    # The kubeconfig Secret still opens the gate, and every Secret comes back as written.
    assert not is_gated(by_name(imported)["a"])
    assert [(s["metadata"]["namespace"], s["metadata"]["name"]) for s in imported.secrets] == [
        (WS, "creds"),
        (WS, "a-kubeconfig"),
        ("default", "elsewhere"),
    ]
    assert imported.secrets[0]["stringData"] == {"username": "u", "password": "p"}


def test_example_secrets_hold_fake_kubeconfigs() -> None:
    capi, _ = example_documents()
    secrets = [d.body for d in capi if d.body["kind"] == "Secret"]
    assert len(secrets) == 2
    for secret in secrets:
        kubeconfig = yaml.safe_load(secret["stringData"]["value"])
        servers = [c["cluster"]["server"] for c in kubeconfig["clusters"]]
        assert all(".invalid:" in server for server in servers)
