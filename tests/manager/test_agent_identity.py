"""The agent identity builders: one cluster's agent can read only its namespace and write only its
deployments' status and its own Cluster's status."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest

from bundler.api.resources import NAMESPACE, ROLE, ROLE_BINDING, SECRET, SERVICE_ACCOUNT
from bundler.core.agent.identity import (
    AGENT_NAME,
    AGENT_TOKEN_SECRET,
    IdentityObject,
    agent_identity,
    agent_namespace_role,
    must_recreate,
    namespace_object,
    retired_identity,
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


KUBERNETES_VERSION = "1.37.0"


def emitted() -> list[dict[str, Any]]:
    """Every object the manager writes for an agent identity."""
    identity = [o.body for o in agent_identity(WS, CLUSTER, "u-1")]
    retired = [o.body for o in retired_identity(WS, CLUSTER)]
    return [namespace_object(WS, CLUSTER), *identity, agent_namespace_role(), *retired]


@pytest.mark.parametrize(
    "obj", emitted(), ids=lambda obj: f"{obj['kind']}/{obj['metadata']['name']}"
)
def test_identity_objects_are_valid_kubernetes(obj: dict[str, Any]) -> None:
    kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_identity_objects_and_where_they_live_token_last() -> None:
    ws_role = workspace_role_name(CLUSTER)
    assert [(o.res, o.namespace, o.name) for o in agent_identity(WS, CLUSTER)] == [
        (SERVICE_ACCOUNT, NS, AGENT_NAME),
        (ROLE_BINDING, NS, AGENT_NAME),
        (ROLE, WS, ws_role),
        (ROLE_BINDING, WS, ws_role),
        (SECRET, NS, AGENT_TOKEN_SECRET),
    ]
    assert all(
        LABELS.items() <= o.body["metadata"]["labels"].items() for o in agent_identity(WS, CLUSTER)
    )


def test_token_secret_asks_the_token_controller_for_the_agent_token() -> None:
    secret = by_place()[("Secret", NS, AGENT_TOKEN_SECRET)]
    assert secret == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "bundler-agent-token",
            "namespace": NS,
            "labels": {**LABELS, "bundler.dev/agent-token": "true"},
            "annotations": {"kubernetes.io/service-account.name": "bundler-agent"},
        },
        "type": "kubernetes.io/service-account-token",
    }


def token_secret() -> IdentityObject:
    return next(o for o in agent_identity(WS, CLUSTER) if o.res == SECRET)


def filled(**changes: Any) -> dict[str, Any]:
    """The token Secret as Kubernetes keeps it once the token controller filled it."""
    body = copy.deepcopy(token_secret().body)
    body["metadata"]["annotations"]["kubernetes.io/service-account.uid"] = "sa-uid"
    body["metadata"]["labels"]["team"] = "platform"
    body["data"] = {"token": "dG9rZW4=", "ca.crt": "Y2E=", "namespace": "bnM="}
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        where = body
        for name in parents:
            where = where[name]
        where[leaf] = value
    return body


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        (filled(), False),
        (filled(data={}), False),
        (filled(metadata__labels={}), False),
        (filled(type="Opaque"), True),
        (filled(metadata__annotations={"kubernetes.io/service-account.name": "default"}), True),
        (filled(metadata__annotations={}), True),
    ],
    ids=[
        "filled-by-kubernetes",
        "no-data",
        "labels-lost",
        "other-type",
        "minted-for-another-account",
        "no-account-annotation",
    ],
)
def test_token_secret_is_recreated_only_when_it_cannot_be_updated(
    observed: dict[str, Any], expected: bool
) -> None:
    assert must_recreate(token_secret(), observed) is expected


@pytest.mark.parametrize(
    ("role", "expected"),
    [("bundler-agent", False), ("admin", True)],
    ids=["same-role", "other-role"],
)
def test_binding_to_another_role_is_recreated(role: str, expected: bool) -> None:
    wanted = next(o for o in agent_identity(WS, CLUSTER) if o.res == ROLE_BINDING)
    observed = copy.deepcopy(wanted.body)
    observed["roleRef"]["name"] = role
    observed["subjects"] = []
    assert must_recreate(wanted, observed) is expected


@pytest.mark.parametrize(
    ("group", "resource", "verbs", "names"),
    [
        ("bundler.dev", "bundledeployments", ["get", "list", "watch"], None),
        ("bundler.dev", "bundledeployments/status", ["patch"], None),
        ("", "secrets", ["get"], None),
    ],
    ids=["read-deployments", "write-deployment-status", "get-secrets-by-name-only"],
)
def test_namespace_role_rules(
    group: str, resource: str, verbs: list[str], names: list[str] | None
) -> None:
    rules = agent_namespace_role()["rules"]
    rule = next(r for r in rules if r["resources"] == [resource])
    assert rule["apiGroups"] == [group]
    assert rule["verbs"] == verbs
    assert rule.get("resourceNames") == names


def test_namespace_role_grants_nothing_else() -> None:
    rules = agent_namespace_role()["rules"]
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
            "resources": ["clusters/status"],
            "verbs": ["patch"],
            "resourceNames": [CLUSTER],
        },
    ]


def test_the_shared_namespace_role_is_a_cluster_role_of_bundler() -> None:
    role = agent_namespace_role()
    assert (role["kind"], role["metadata"]) == (
        "ClusterRole",
        {"name": "bundler-agent", "labels": {"bundler.dev/managed-by": "bundler"}},
    )


def test_the_retired_namespace_role_is_found_by_its_place_and_labels() -> None:
    [retired] = retired_identity(WS, CLUSTER)
    assert (retired.res, retired.namespace, retired.name) == (ROLE, NS, AGENT_NAME)
    assert retired.body["metadata"]["labels"] == LABELS


@pytest.mark.parametrize(
    ("namespace", "binding_name", "kind", "role"),
    [
        (NS, AGENT_NAME, "ClusterRole", "bundler-agent"),
        (WS, workspace_role_name(CLUSTER), "Role", workspace_role_name(CLUSTER)),
    ],
    ids=["cluster-namespace", "workspace"],
)
def test_bindings_give_the_role_to_the_agent_service_account(
    namespace: str, binding_name: str, kind: str, role: str
) -> None:
    """In the cluster namespace, the shared ClusterRole: a RoleBinding grants it only there."""
    binding = by_place()[("RoleBinding", namespace, binding_name)]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": kind,
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
