"""The agent identity builders: one cluster's agent can read only its namespace and write only its
deployments' status and its own Cluster's status."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import NAMESPACE, ROLE, ROLE_BINDING, SERVICE_ACCOUNT
from bundler.core.agent_identity import (
    AGENT_NAME,
    agent_identity,
    namespace_object,
    workspace_role_name,
)
from bundler.core.naming import cluster_namespace

WS = "fleet-default"
CLUSTER = "prod-eu-1"
NS = cluster_namespace(WS, CLUSTER)
LABELS = {
    "bundler.dev/managed-by": "bundler",
    "bundler.dev/cluster-name": CLUSTER,
    "bundler.dev/cluster-namespace": WS,
}


def by_place() -> dict[tuple[str, str | None, str], dict[str, Any]]:
    return {(o.res.kind, o.namespace, o.name): o.body for o in agent_identity(WS, CLUSTER, "u-1")}


def test_namespace_is_labelled_with_its_cluster() -> None:
    ns = namespace_object(WS, CLUSTER)
    assert (ns["kind"], ns["apiVersion"]) == (NAMESPACE.kind, NAMESPACE.api_version)
    assert ns["metadata"] == {"name": NS, "labels": LABELS}


def test_identity_objects_and_where_they_live() -> None:
    ws_role = workspace_role_name(CLUSTER)
    assert [(o.res, o.namespace, o.name) for o in agent_identity(WS, CLUSTER)] == [
        (SERVICE_ACCOUNT, NS, AGENT_NAME),
        (ROLE, NS, AGENT_NAME),
        (ROLE_BINDING, NS, AGENT_NAME),
        (ROLE, WS, ws_role),
        (ROLE_BINDING, WS, ws_role),
    ]
    assert all(o.body["metadata"]["labels"] == LABELS for o in agent_identity(WS, CLUSTER))


@pytest.mark.parametrize(
    ("group", "resource", "verbs", "names"),
    [
        ("bundler.dev", "bundledeployments", ["get", "list", "watch"], None),
        ("bundler.dev", "bundledeployments/status", ["get", "update", "patch"], None),
        ("", "secrets", ["get", "list", "watch"], None),
    ],
    ids=["read-deployments", "write-deployment-status", "read-secrets"],
)
def test_namespace_role_rules(
    group: str, resource: str, verbs: list[str], names: list[str] | None
) -> None:
    rules = by_place()[("Role", NS, AGENT_NAME)]["rules"]
    rule = next(r for r in rules if r["resources"] == [resource])
    assert rule["apiGroups"] == [group]
    assert rule["verbs"] == verbs
    assert rule.get("resourceNames") == names


def test_namespace_role_grants_nothing_else() -> None:
    rules = by_place()[("Role", NS, AGENT_NAME)]["rules"]
    resources = sorted(r for rule in rules for r in rule["resources"])
    assert resources == ["bundledeployments", "bundledeployments/status", "secrets"]
    assert not any(v in rule["verbs"] for rule in rules for v in ("create", "delete", "*"))
    assert all(
        "update" not in rule["verbs"]
        for rule in rules
        if rule["resources"] != ["bundledeployments/status"]
    )


def test_workspace_role_is_limited_to_its_own_cluster() -> None:
    rules = by_place()[("Role", WS, workspace_role_name(CLUSTER))]["rules"]
    assert rules == [
        {
            "apiGroups": ["bundler.dev"],
            "resources": ["clusters"],
            "verbs": ["get"],
            "resourceNames": [CLUSTER],
        },
        {
            "apiGroups": ["bundler.dev"],
            "resources": ["clusters/status"],
            "verbs": ["get", "update", "patch"],
            "resourceNames": [CLUSTER],
        },
    ]


@pytest.mark.parametrize(
    ("namespace", "role"),
    [(NS, AGENT_NAME), (WS, workspace_role_name(CLUSTER))],
    ids=["cluster-namespace", "workspace"],
)
def test_bindings_give_the_role_to_the_agent_service_account(namespace: str, role: str) -> None:
    binding = by_place()[("RoleBinding", namespace, role)]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role,
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": NS}]


def test_workspace_objects_are_owned_by_the_cluster() -> None:
    owned = [o for o in agent_identity(WS, CLUSTER, "u-1") if o.namespace == WS]
    assert [o.body["metadata"]["ownerReferences"] for o in owned] == [
        [{"apiVersion": "bundler.dev/v1alpha1", "kind": "Cluster", "name": CLUSTER, "uid": "u-1"}]
    ] * 2
    unowned = [o for o in agent_identity(WS, CLUSTER) if o.namespace == WS]
    assert all("ownerReferences" not in o.body["metadata"] for o in unowned)


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [("a", "bundler-agent-a"), ("x" * 253, None)],
    ids=["short", "longest-cluster-name"],
)
def test_workspace_role_name_fits(cluster: str, expected: str | None) -> None:
    name = workspace_role_name(cluster)
    assert len(name) <= 253
    if expected is not None:
        assert name == expected
    assert workspace_role_name(cluster) == name
