"""The parsed indexes beside the informers: what they hold after objects come and go."""

from __future__ import annotations

from bundler.api.meta import ObjectMeta
from bundler.core.labels import (
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)
from bundler.manager.observed.indexes import DeploymentIndex, cluster_identity
from bundler.store.protocol import EventType, Obj
from tests.support.builders import WS


def deployment(bundle: str, cluster: str) -> Obj:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "BundleDeployment",
        "metadata": {
            "name": bundle,
            "namespace": f"cluster-{cluster}",
            "labels": {
                LABEL_BUNDLE_NAMESPACE: WS,
                LABEL_BUNDLE_NAME: bundle,
                LABEL_CLUSTER_NAMESPACE: WS,
                LABEL_CLUSTER_NAME: cluster,
            },
        },
        "spec": {"options": {"helm": {}, "namespace": "x"}, "deploymentID": "s-1"},
    }


def test_deployment_index_forgets_bundles_and_namespaces_that_are_gone() -> None:
    index = DeploymentIndex()
    objects = [deployment(f"b{n}", f"c{n}") for n in range(3)]
    for obj in objects:
        index.on_event(EventType.ADDED, obj)
    for obj in objects:
        index.on_event(EventType.DELETED, obj)
    # The buckets themselves: nothing may stay behind for deleted bundles and clusters.
    assert (index._by_bundle, index._by_namespace, index._placed) == ({}, {}, {})


def test_deployments_with_equal_specs_share_one_spec_model() -> None:
    index = DeploymentIndex()
    for cluster in ("c1", "c2"):
        index.on_event(EventType.ADDED, deployment("b", cluster))
    other = deployment("b", "c3")
    other["spec"]["deploymentID"] = "s-2"
    index.on_event(EventType.ADDED, other)
    models = index.of_bundle(f"{WS}/b")
    assert models[f"{WS}/c1"].spec is models[f"{WS}/c2"].spec
    assert models[f"{WS}/c3"].spec.deploymentID == "s-2"
    assert models[f"{WS}/c1"].metadata.labels[LABEL_CLUSTER_NAME] == "c1"


def test_a_spec_that_does_not_parse_is_not_indexed() -> None:
    index = DeploymentIndex()
    broken = deployment("b", "c1")
    broken["spec"] = {"options": "not a map"}
    index.on_event(EventType.ADDED, broken)
    assert index.of_bundle(f"{WS}/b") == {}


def test_parsed_models_stay_independent_when_copied_with_changes() -> None:
    index = DeploymentIndex()
    for cluster in ("c1", "c2"):
        index.on_event(EventType.ADDED, deployment("b", cluster))
    models = index.of_bundle(f"{WS}/b")
    one, two = models[f"{WS}/c1"], models[f"{WS}/c2"]
    before = set(two.metadata.model_fields_set)
    changed = one.metadata.model_copy(update={"deletionTimestamp": "2026-01-01T00:00:00Z"})
    assert "deletionTimestamp" in changed.model_fields_set
    assert one.metadata.model_fields_set == two.metadata.model_fields_set == before
    assert "deletionTimestamp" not in before


def test_a_spec_edited_under_the_same_deployment_id_is_parsed_again() -> None:
    index = DeploymentIndex()
    index.on_event(EventType.ADDED, deployment("b", "c1"))
    edited = deployment("b", "c2")
    edited["spec"]["options"]["namespace"] = "edited"
    index.on_event(EventType.ADDED, edited)
    models = index.of_bundle(f"{WS}/b")
    assert models[f"{WS}/c1"].spec.deploymentID == models[f"{WS}/c2"].spec.deploymentID
    assert [models[f"{WS}/{c}"].spec.options.namespace for c in ("c1", "c2")] == ["x", "edited"]


def test_deployments_of_their_own_specs_share_the_sets_of_their_set_fields() -> None:
    """Distinct specs (values naming the cluster) are models of their own, down to the Helm
    options; what pydantic keeps per model of the fields set is shared, at every level."""
    index = DeploymentIndex()
    for n, cluster in enumerate(("c1", "c2")):
        obj = deployment("b", cluster)
        obj["spec"]["options"]["helm"] = {"chart": "c", "values": {"host": cluster}}
        obj["spec"]["deploymentID"] = f"s-{n}"
        index.on_event(EventType.ADDED, obj)
    models = index.of_bundle(f"{WS}/b")
    one, two = models[f"{WS}/c1"].spec, models[f"{WS}/c2"].spec
    assert one is not two
    assert one.options.helm is not None and two.options.helm is not None
    assert one.options.helm.values != two.options.helm.values
    pairs = [(one, two), (one.options, two.options), (one.options.helm, two.options.helm)]
    for mine, theirs in pairs:
        assert mine.__pydantic_fields_set__ is theirs.__pydantic_fields_set__


def test_equal_clusters_share_one_identity_and_a_relabelled_one_has_its_own() -> None:
    def meta(region: str) -> ObjectMeta:
        return ObjectMeta(name="c1", namespace=WS, uid="u", generation=1, labels={"r": region})

    first = cluster_identity(meta("eu"))
    assert cluster_identity(meta("eu")) is first
    relabelled = cluster_identity(meta("us"))
    assert relabelled != first
    assert relabelled[2] == (("r", "us"),)
