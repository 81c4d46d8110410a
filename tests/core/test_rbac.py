"""The RBAC rules as data: their wire form and the objects built from them."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE_DEPLOYMENT, CLUSTER, HELM_RELEASE, OCI_REPOSITORY
from bundler.core.rbac import (
    AGENT_NAMESPACE_RULES,
    MANAGER_LEASE,
    MANAGER_RULES,
    REMOTE_AGENT_RULES,
    PolicyRule,
    agent_cluster_rules,
    manager_cluster_role,
    manager_cluster_role_binding,
    rule,
)
from bundler.manager.options import LEASE_NAME


@pytest.mark.parametrize(
    ("built", "wire"),
    [
        (
            rule(["get"], [CLUSTER], "status", names=["c1"]),
            {
                "verbs": ["get"],
                "apiGroups": ["bundler.dev"],
                "resources": ["clusters/status"],
                "resourceNames": ["c1"],
            },
        ),
        (
            rule(["list"], [CLUSTER, BUNDLE_DEPLOYMENT]),
            {
                "verbs": ["list"],
                "apiGroups": ["bundler.dev"],
                "resources": ["clusters", "bundledeployments"],
            },
        ),
        (
            rule(["patch"], [HELM_RELEASE, OCI_REPOSITORY]),
            {
                "verbs": ["patch"],
                "apiGroups": ["helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"],
                "resources": ["helmreleases", "ocirepositories"],
            },
        ),
        (
            PolicyRule(("get",), non_resource_urls=("/version",)),
            {"verbs": ["get"], "nonResourceURLs": ["/version"]},
        ),
    ],
    ids=["subresource-by-name", "one-group", "two-groups", "non-resource-url"],
)
def test_rule_wire_form_leaves_out_empty_lists(built: PolicyRule, wire: dict[str, Any]) -> None:
    assert built.to_dict() == wire
    assert PolicyRule.from_dict(wire) == built


def test_manager_cluster_role_carries_every_manager_rule() -> None:
    role = manager_cluster_role("m")
    assert role["kind"] == "ClusterRole"
    assert role["metadata"] == {"name": "m"}
    assert [PolicyRule.from_dict(r) for r in role["rules"]] == list(MANAGER_RULES)


def test_manager_binding_names_its_service_account() -> None:
    binding = manager_cluster_role_binding("bundler-system")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "bundler-manager",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "bundler-manager", "namespace": "bundler-system"}
    ]


def test_manager_rules_name_the_lease_the_manager_elects_on() -> None:
    assert MANAGER_LEASE == LEASE_NAME


@pytest.mark.parametrize(
    "rules",
    [MANAGER_RULES, REMOTE_AGENT_RULES, AGENT_NAMESPACE_RULES, agent_cluster_rules("c1")],
    ids=["manager", "remote-agent", "agent-namespace", "agent-workspace"],
)
def test_no_identity_holds_escalate_bind_or_wildcards(rules: tuple[PolicyRule, ...]) -> None:
    verbs = {v for r in rules for v in r.verbs}
    assert not verbs & {"escalate", "bind", "impersonate", "*"}
    assert all("*" not in r.resources and "*" not in r.api_groups for r in rules)
