"""The manager's RBAC (bundler.core.rbac.MANAGER_RULES) is exactly what it needs: against an API
server that enforces RBAC, the whole loop (leader election, cluster namespaces and agent
identities, credentials copies, roll-ups, pull agents) runs without one request refused, and
without any single rule the manager is refused something it does.

The two rules only the Cluster API importer uses are proven in tests/capi/test_rbac_rules.py.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from bundler.api.resources import (
    BUNDLE,
    CAPI_CLUSTER,
    CLUSTER_ROLE_BINDING,
    HELM_RELEASE,
    NAMESPACE,
    ROLE,
    SECRET,
)
from bundler.apiserver import ApiServer
from bundler.core.rbac import (
    BOOTSTRAP_RULES,
    CAPI_REFERENCE_RULES,
    MANAGER_RULES,
    PolicyRule,
    cluster_role_binding,
)
from bundler.kube.store import KubeStore
from bundler.store.errors import Forbidden
from tests.support.agent.http_fleet import HttpFleet, eventually
from tests.support.builders import WS, bundle
from tests.support.identities import MANAGER_USER, manager_kubeconfig
from tests.support.manager.rbac_rules import rule_id, without
from tests.support.manager.registry_charts import basic_auth_secret

CREDS = "registry-creds"
CAPI_GROUPS = {CAPI_CLUSTER.group, HELM_RELEASE.group}
LOOP_RULES = [
    r
    for r in MANAGER_RULES
    if not CAPI_GROUPS & set(r.api_groups)
    and r not in BOOTSTRAP_RULES
    and r not in CAPI_REFERENCE_RULES
]


def credentials_fleet(
    tmp_path: Path, http_fleets: list[HttpFleet], rules: list[PolicyRule]
) -> HttpFleet:
    """A leader-elected manager, one pull cluster, and a Bundle whose credentials get copied."""
    fleet = HttpFleet(tmp_path, rules, leader_elect=True)
    http_fleets.append(fleet)
    fleet.add_cluster("eu-1")
    fleet.put(SECRET, basic_auth_secret(CREDS, "u", "p"))
    app = bundle([{"clusterSelector": {}}], helm={"secretRef": {"name": CREDS}})
    fleet.put(BUNDLE, app.to_wire())
    return fleet


def test_the_loop_runs_with_exactly_the_manager_rules(
    tmp_path: Path, http_fleets: list[HttpFleet]
) -> None:
    fleet = credentials_fleet(tmp_path, http_fleets, list(MANAGER_RULES))
    fleet.start()
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "the bundle to be Ready")
    assert fleet.management.denials() == []


@pytest.mark.parametrize("rule", LOOP_RULES, ids=[rule_id(r) for r in LOOP_RULES])
def test_without_any_one_rule_the_manager_is_refused(
    tmp_path: Path, http_fleets: list[HttpFleet], rule: PolicyRule
) -> None:
    fleet = credentials_fleet(tmp_path, http_fleets, without(rule))
    with contextlib.suppress(Forbidden):  # refused while filling its caches
        fleet.start(agents=False)
    eventually(lambda: bool(fleet.management.denials(MANAGER_USER)), "a refused request")


def test_the_manager_cannot_grant_more_than_it_holds(tmp_path: Path) -> None:
    """No escalate, no bind: a Role beyond the manager's own rights is refused by Kubernetes."""
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        kubeconfig = manager_kubeconfig(server, tmp_path)
        with KubeStore.from_kubeconfig(kubeconfig) as manager:
            role = {
                "metadata": {"name": "too-much", "namespace": WS},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
            }
            with pytest.raises(Forbidden, match="attempting to grant RBAC permissions not"):
                manager.create(ROLE, role)
            binding = cluster_role_binding("mine", "cluster-admin", [])
            with pytest.raises(Forbidden, match="cannot create resource"):
                manager.create(CLUSTER_ROLE_BINDING, binding)
