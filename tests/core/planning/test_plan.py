from __future__ import annotations

from typing import Any

import pytest

from bundler.core.naming import cluster_namespace
from bundler.core.planning import key, plan_bundle
from bundler.errors import InvalidInputError
from tests.support.builders import WS, bundle, cluster, group, helm_of

CLUSTERS = [
    cluster("prod-1", {"env": "prod", "region": "eu"}, values={"tier": "gold"}),
    cluster("dev-1", {"env": "dev", "region": "us"}),
]


def _one(b: Any, c: Any = None) -> Any:
    plan = plan_bundle(b, [c] if c else CLUSTERS, [])
    return plan


def test_target_overrides_merge_values_and_replace_scalars() -> None:
    b = bundle(
        [
            {
                "name": "prod",
                "clusterSelector": {"matchLabels": {"env": "prod"}},
                "namespace": "prod-ns",
                "helm": {"version": "2.0.0", "values": {"b": {"y": 2}, "list": [9]}},
            },
            {"name": "rest", "clusterSelector": {}},
        ],
        helm={"values": {"a": 1, "b": {"x": 1, "y": 1}, "list": [1, 2]}},
        namespace="app-ns",
    )
    plan = plan_bundle(b, CLUSTERS, [])
    by_cluster = {d.cluster: d for d in plan.deployments}
    prod = by_cluster[f"{WS}/prod-1"].options
    assert helm_of(prod).version == "2.0.0"
    assert helm_of(prod).values == {"a": 1, "b": {"x": 1, "y": 2}, "list": [9]}
    assert prod.namespace == "prod-ns"
    dev = by_cluster[f"{WS}/dev-1"].options
    assert helm_of(dev).version == "1.0.0"
    assert dev.namespace == "app-ns"


def test_all_matches_merges_every_matching_target_in_order() -> None:
    b = bundle(
        [
            {"clusterSelector": {}, "helm": {"values": {"a": 1, "b": 1}}},
            {"clusterSelector": {"matchLabels": {"env": "prod"}}, "helm": {"values": {"b": 2}}},
        ],
        targetMode="AllMatches",
    )
    (prod,) = [d for d in plan_bundle(b, CLUSTERS, []).deployments if d.cluster.endswith("prod-1")]
    assert helm_of(prod.options).values == {"a": 1, "b": 2}


def test_names_labels_and_namespace() -> None:
    (d,) = plan_bundle(bundle([{"clusterName": "prod-1"}]), CLUSTERS, []).deployments
    assert d.namespace == cluster_namespace(WS, "prod-1")
    assert d.labels == {
        "bundler.dev/bundle-name": "app",
        "bundler.dev/bundle-namespace": WS,
        "bundler.dev/cluster-name": "prod-1",
        "bundler.dev/cluster-namespace": WS,
    }
    assert helm_of(d.options).releaseName == "app"
    assert d.options.namespace == "default"


def test_deployment_id_is_stable_and_key_order_free() -> None:
    one = bundle([{"clusterSelector": {}}], helm={"values": {"a": 1, "b": {"c": 1, "d": 2}}})
    two = bundle([{"clusterSelector": {}}], helm={"values": {"b": {"d": 2, "c": 1}, "a": 1}})
    ids_one = [d.deployment_id for d in plan_bundle(one, CLUSTERS, []).deployments]
    ids_two = [d.deployment_id for d in plan_bundle(two, CLUSTERS, []).deployments]
    assert ids_one == ids_two
    assert ids_one == [d.deployment_id for d in plan_bundle(one, CLUSTERS, []).deployments]


@pytest.mark.parametrize(
    "change",
    [{"values": {"a": 2}}, {"version": "1.0.1"}, {"releaseName": "other"}, {"maxHistory": 3}],
    ids=["values", "version", "release-name", "pass-through-field"],
)
def test_any_option_change_gives_new_deployment_id(change: dict[str, Any]) -> None:
    base = bundle([{"clusterSelector": {}}], helm={"values": {"a": 1}})
    changed = bundle([{"clusterSelector": {}}], helm={"values": {"a": 1}, **change})
    before = plan_bundle(base, CLUSTERS, []).deployments[0].deployment_id
    after = plan_bundle(changed, CLUSTERS, []).deployments[0].deployment_id
    assert before != after


def test_manager_only_fields_do_not_change_deployment_id() -> None:
    base = bundle([{"clusterSelector": {}}])
    polled = bundle([{"clusterSelector": {}}], helm={"pollInterval": "5m"})
    assert (
        plan_bundle(base, CLUSTERS, []).deployments[0].deployment_id
        == plan_bundle(polled, CLUSTERS, []).deployments[0].deployment_id
    )


def test_template_error_is_confined_to_its_cluster() -> None:
    b = bundle([{"clusterSelector": {}}], helm={"values": {"tier": "${ cluster.values.tier }"}})
    plan = plan_bundle(b, CLUSTERS, [])
    assert [d.cluster for d in plan.deployments] == [f"{WS}/prod-1"]
    assert helm_of(plan.deployments[0].options).values == {"tier": "gold"}
    (err,) = plan.errors
    assert err.cluster == f"{WS}/dev-1"
    assert "tier" in err.message


def test_disable_templating_passes_values_verbatim() -> None:
    raw = {"cmd": "${ cluster.values.missing }"}
    b = bundle([{"clusterSelector": {}}], helm={"values": raw, "disableTemplating": True})
    plan = plan_bundle(b, CLUSTERS, [])
    assert not plan.errors
    assert all(helm_of(d.options).values == raw for d in plan.deployments)


def test_resolved_versions_replace_ranges() -> None:
    b = bundle([{"clusterSelector": {}}], helm={"version": "1.*"})
    resolved = {("https://charts.example.com", "app", "1.*"): "1.4.2"}
    plan = plan_bundle(b, CLUSTERS, [], resolved)
    assert {helm_of(d.options).version for d in plan.deployments} == {"1.4.2"}


def test_group_targets_use_groups_of_the_workspace() -> None:
    groups = [group("prod", {"matchLabels": {"env": "prod"}})]
    plan = plan_bundle(bundle([{"clusterGroup": "prod"}]), CLUSTERS, groups)
    assert [d.cluster for d in plan.deployments] == [f"{WS}/prod-1"]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"helm": {"repo": "ftp://x"}}, "spec.helm.repo"),
        ({"helm": {"version": ">>1"}}, "spec.helm.version"),
        ({"helm": {"releaseName": "Not_Valid"}}, "spec.helm.releaseName"),
        ({"namespace": "Bad_NS"}, "spec.namespace"),
        (
            {
                "targets": [
                    {"clusterSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}
                ]
            },
            "spec.targets[0].clusterSelector.matchExpressions[0].values",
        ),
        ({"dependsOn": [{"name": "app"}]}, "spec.dependsOn[0].name"),
        ({"helm": {"insecure": True}}, "spec.helm.insecure"),
        ({"helm": {"secretRef": {"name": "bundler-agent-token"}}}, "spec.helm.secretRef.name"),
    ],
    ids=[
        "repo-scheme",
        "version-garbage",
        "release-name",
        "namespace",
        "selector-values",
        "self-dep",
        "insecure-on-https",
        "reserved-secret-name",
    ],
)
def test_invalid_bundles_name_the_field(spec: dict[str, Any], field: str) -> None:
    helm = spec.pop("helm", None)
    with pytest.raises(InvalidInputError) as err:
        plan_bundle(bundle(helm=helm, **spec), CLUSTERS, [])
    assert err.value.field == field
    assert err.value.obj == f"Bundle {WS}/app"


def test_gated_clusters_get_no_bundle_deployments() -> None:
    gated = cluster("capi-1", {"env": "prod"})
    gated = gated.model_copy(
        update={
            "metadata": gated.metadata.model_copy(
                update={"annotations": {"bundler.dev/import-gate": "ControlPlaneNotInitialized"}}
            )
        }
    )
    plan = plan_bundle(bundle([{"clusterSelector": {}}]), [*CLUSTERS, gated], [])
    assert f"{WS}/capi-1" not in [d.cluster for d in plan.deployments]
    assert f"{WS}/capi-1" not in plan.targeted


DIGEST_ONE, DIGEST_TWO = "sha256:" + "1" * 64, "sha256:" + "2" * 64
MANAGED = {"kind": "Secret", "name": "db", "source": "Management"}


@pytest.mark.parametrize(
    ("delivered", "expected"),
    [
        ({}, None),
        (
            {("Secret", "db"): DIGEST_ONE},
            [("Secret", "db", DIGEST_ONE, "app-mgmt-secret-db-1111111111")],
        ),
        ({("Secret", "other"): DIGEST_ONE}, None),
    ],
    ids=["not-delivered", "delivered", "another-object"],
)
def test_delivered_objects_are_recorded_in_the_options(
    delivered: dict[tuple[str, str], str], expected: list[tuple[str, ...]] | None
) -> None:
    b = bundle([{"clusterSelector": {}}], helm={"valuesFrom": [MANAGED]})
    for planned in plan_bundle(b, CLUSTERS, [], delivered=delivered).deployments:
        found = planned.options.managementValues
        recorded = (
            None
            if found is None
            else [(d.kind.value, d.name, d.digest, d.secretName) for d in found]
        )
        assert recorded == expected
        values_from = helm_of(planned.options).valuesFrom
        assert values_from is not None
        assert values_from[0].to_wire() == MANAGED


def test_a_new_digest_is_a_new_deployment_id_for_the_clusters_that_read_it_only() -> None:
    targets: list[dict[str, Any]] = [
        {"clusterSelector": {"matchLabels": {"env": "prod"}}, "helm": {"valuesFrom": [MANAGED]}},
        {"clusterSelector": {}},
    ]
    b = bundle(targets, helm={"values": {"templated": "${ cluster.name }"}})

    def ids(digest: str) -> dict[str, str]:
        plan = plan_bundle(b, CLUSTERS, [], delivered={("Secret", "db"): digest})
        return {d.cluster: d.deployment_id for d in plan.deployments}

    one, two = ids(DIGEST_ONE), ids(DIGEST_TWO)
    assert one[f"{WS}/prod-1"] != two[f"{WS}/prod-1"]
    assert one[f"{WS}/dev-1"] == two[f"{WS}/dev-1"]
    assert ids(DIGEST_ONE) == one


def test_a_key_is_one_shared_string() -> None:
    """Rows, placements and indexes of every Bundle keep their cluster's key: one string."""
    namespace, name = "".join(["fleet-", "default"]), "".join(["edge-", "1"])
    assert key(namespace, name) == "fleet-default/edge-1"
    assert key(namespace, name) is key("fleet-default", "edge-1")
