"""The agent chart's RBAC on its own cluster, enforced: a pull agent whose downstream identity is
exactly the ServiceAccount, Role and RoleBinding that charts/bundler-agent renders applies a
BundleDeployment (registry Secret, Flux source, HelmRelease), evaluates its health checks once the
release is Ready (a Deployment's and a Job's) and reports it, without one refusal; without any one
rule of its roles it is refused. Both clusters are test API servers enforcing RBAC;
on the management cluster the admin plays the manager (tests.support.identities)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bundler.agent.agent import Agent
from bundler.agent.config import AgentConfig
from bundler.agent.desired import credentials_secret_name
from bundler.api.resources import (
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    HELM_RELEASE,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SECRET,
    SERVICE_ACCOUNT,
)
from bundler.apiserver import ApiServer
from bundler.core.agent.identity import ANNOTATION_SERVICE_ACCOUNT_NAME, SERVICE_ACCOUNT_TOKEN_TYPE
from bundler.core.naming import cluster_namespace
from bundler.core.rbac import PolicyRule
from bundler.kube.store import KubeStore
from bundler.runtime.host import Host
from bundler.store.errors import NotFound
from tests.support.agent.http_fleet import FAST, eventually
from tests.support.agent.lone_agent import LoneAgent
from tests.support.agent.objects import CLUSTER_NAME, bd_object
from tests.support.builders import WS, cluster
from tests.support.charts.rendering import AGENT_CHART, AGENT_REQUIRED, Obj, of_kind, render
from tests.support.charts.rendering import NAMESPACE as AGENT_NAMESPACE
from tests.support.identities import admin_store, agent_identity_by_hand, service_account_token
from tests.support.manager.rbac_rules import rule_id
from tests.support.manager.registry_charts import basic_auth_secret

CREDS = "registry-creds"
CHECKS = [
    {"kind": "Deployment", "name": "web", "namespace": "app"},
    {"kind": "Job", "name": "migrate", "namespace": "app"},
]
CHART_OBJECTS = render(AGENT_CHART, AGENT_REQUIRED)
# The agent's Role in its namespace and its ClusterRole (its own namespace, read by name).
CHART_ROLES = [*of_kind(CHART_OBJECTS, "Role"), *of_kind(CHART_OBJECTS, "ClusterRole")]
CHART_RULES = [PolicyRule.from_dict(r) for role in CHART_ROLES for r in role["rules"]]


@dataclass
class Pair(LoneAgent):
    """A pull agent between a management and a downstream test API server, whose identity there
    is the chart's (`user`)."""

    downstream: ApiServer
    user: str


RBAC_KINDS = {res.kind: res for res in (ROLE, ROLE_BINDING, CLUSTER_ROLE, CLUSTER_ROLE_BINDING)}


def _install_agent_identity(server: ApiServer, directory: Path, without: PolicyRule | None) -> str:
    """What `helm install` of the agent chart creates for the agent's identity, its roles
    `without` one rule if told, done by the admin; returns the ServiceAccount's token."""
    (account,) = of_kind(CHART_OBJECTS, "ServiceAccount")
    name = account["metadata"]["name"]
    token_secret: Obj = {
        "metadata": {
            "name": f"{name}-token",
            "namespace": AGENT_NAMESPACE,
            "annotations": {ANNOTATION_SERVICE_ACCOUNT_NAME: name},
        },
        "type": SERVICE_ACCOUNT_TOKEN_TYPE,
    }
    with admin_store(server, directory) as admin:
        admin.create(NAMESPACE, {"metadata": {"name": AGENT_NAMESPACE}})
        admin.create(SERVICE_ACCOUNT, account)
        for obj in CHART_OBJECTS:
            if obj["kind"] in RBAC_KINDS:
                if "rules" in obj:
                    kept = [r for r in obj["rules"] if PolicyRule.from_dict(r) != without]
                    obj = {**obj, "rules": kept}
                admin.create(RBAC_KINDS[obj["kind"]], obj)
        admin.create(SECRET, token_secret)
        return service_account_token(admin, AGENT_NAMESPACE, f"{name}-token")


@pytest.fixture
def agent_pair(tmp_path: Path) -> Iterator[Callable[[PolicyRule | None], Pair]]:
    started: list[Pair] = []
    servers = [ApiServer().start(), ApiServer().start()]

    def start(without: PolicyRule | None) -> Pair:
        management, downstream = servers
        management.store.create(NAMESPACE, {"metadata": {"name": WS}})
        management.store.create(CLUSTER, cluster(CLUSTER_NAME).to_wire())
        kubeconfig = agent_identity_by_hand(management, tmp_path, WS, CLUSTER_NAME)
        creds = basic_auth_secret(CREDS, "u", "p")
        namespace = cluster_namespace(WS, CLUSTER_NAME)
        management.store.create(
            SECRET, {**creds, "metadata": {"name": CREDS, "namespace": namespace}}
        )
        management.store.create(BUNDLE_DEPLOYMENT, bd_object(secret=CREDS, health_checks=CHECKS))
        token = _install_agent_identity(downstream, tmp_path, without)
        stores = [
            KubeStore.from_kubeconfig(kubeconfig, None, FAST),
            KubeStore.from_kubeconfig(
                downstream.kubeconfig(tmp_path / "agent-downstream", token=token), None, FAST
            ),
        ]
        host = Host(stores[0], workers=2, backoff_cap=0.5, name="chart-agent")
        config = AgentConfig(workspace=WS, cluster=CLUSTER_NAME, agent_namespace=AGENT_NAMESPACE)
        agent = Agent(host, stores[0], stores[1], config)
        (account,) = of_kind(CHART_OBJECTS, "ServiceAccount")
        user = f"system:serviceaccount:{AGENT_NAMESPACE}:{account['metadata']['name']}"
        pair = Pair(management, agent, host, stores, downstream, user)
        started.append(pair)
        agent.start()
        host.start()
        return pair

    yield start
    for pair in started:
        pair.stop()
    for server in servers:
        server.stop()


def _flux_reports_ready(pair: Pair) -> None:
    """Play Flux: the HelmRelease the agent wrote, once there, is Ready on its chart version."""
    try:
        release = pair.downstream.store.get(HELM_RELEASE, "app", AGENT_NAMESPACE)
    except NotFound:
        return
    generation = release["metadata"]["generation"]
    ready = {"type": "Ready", "status": "True", "reason": "InstallSucceeded", "message": "ok"}
    status = {
        "observedGeneration": generation,
        "conditions": [ready],
        "history": [{"name": "app", "namespace": "app", "chartVersion": "1.0.0", "version": 1}],
    }
    if release.get("status") != status:
        pair.downstream.store.patch_status(HELM_RELEASE, "app", {"status": status}, AGENT_NAMESPACE)


def test_the_agent_applies_a_deployment_with_exactly_the_charts_role(
    agent_pair: Callable[[PolicyRule | None], Pair],
) -> None:
    pair = agent_pair(None)
    namespace = cluster_namespace(WS, CLUSTER_NAME)

    def checked() -> bool:
        _flux_reports_ready(pair)
        status = pair.management.store.get(BUNDLE_DEPLOYMENT, "app", namespace).get("status") or {}
        return (
            bool(status.get("appliedDeploymentID")) and len(status.get("healthChecks") or []) == 2
        )

    eventually(checked, "the deployment applied and its health checks evaluated")
    assert pair.downstream.store.get(HELM_RELEASE, "app", AGENT_NAMESPACE)
    credentials = pair.downstream.store.get(SECRET, credentials_secret_name("app"), AGENT_NAMESPACE)
    assert credentials["data"] == basic_auth_secret(CREDS, "u", "p")["data"]
    assert pair.downstream.denials(pair.user) == []


@pytest.mark.parametrize("rule", CHART_RULES, ids=[rule_id(r) for r in CHART_RULES])
def test_without_any_one_rule_of_the_charts_role_the_agent_is_refused(
    agent_pair: Callable[[PolicyRule | None], Pair], rule: PolicyRule
) -> None:
    pair = agent_pair(rule)

    def refused() -> bool:
        _flux_reports_ready(pair)
        return bool(pair.downstream.denials(pair.user))

    eventually(refused, "a refused request")
