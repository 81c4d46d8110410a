"""What a pull agent's identity allows on the management cluster, against an API server that
enforces RBAC: its own BundleDeployments and status, one Secret at a time by name, its own
Cluster's status - and nothing else. Each rule of the agent's Roles is needed, and so is each rule
of the remote-mode agent's ClusterRole.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.agent.agent import Agent
from bundler.agent.config import AgentConfig
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE, ROLE, SECRET
from bundler.apiserver import ApiServer
from bundler.core.agent.identity import AGENT_TOKEN_SECRET
from bundler.core.naming import cluster_namespace
from bundler.core.rbac import (
    AGENT_NAMESPACE_RULES,
    REMOTE_AGENT_RULES,
    PolicyRule,
    agent_cluster_rules,
)
from bundler.kube.store import KubeStore
from bundler.runtime.host import Host
from bundler.store.errors import Forbidden
from bundler.store.protocol import Store
from tests.support.agent.http_fleet import FAST, HttpFleet, eventually
from tests.support.agent.lone_agent import LoneAgent
from tests.support.agent.objects import CLUSTER_NAME, bd_object
from tests.support.builders import WS, bundle, cluster
from tests.support.identities import REMOTE_AGENT_USER, agent_identity_by_hand, agent_user
from tests.support.manager.rbac_rules import rule_id
from tests.support.manager.registry_charts import basic_auth_secret

CREDS = "registry-creds"
OWN = cluster_namespace(WS, "eu-1")
OTHER = cluster_namespace(WS, "us-1")
AGENT_RULES = [*AGENT_NAMESPACE_RULES, *agent_cluster_rules(CLUSTER_NAME)]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpFleet]:
    """Two pull clusters deployed with credentials; their agents hold their real kubeconfigs."""
    built = HttpFleet(tmp_path_factory.mktemp("fleet"))
    try:
        built.add_cluster("eu-1")
        built.add_cluster("us-1")
        built.put(SECRET, basic_auth_secret(CREDS, "u", "p"))
        app = bundle([{"clusterSelector": {}}], helm={"secretRef": {"name": CREDS}})
        built.put(BUNDLE, app.to_wire())
        built.start()
        eventually(lambda: built.ready_clusters("app") == "2/2", "the bundle to be Ready")
        yield built
    finally:
        built.stop()


def agent_store(fleet: HttpFleet) -> Store:
    agent = fleet.clusters["eu-1"].agent
    assert agent is not None
    return agent.management


Action = Callable[[Store], Any]

REFUSED: list[tuple[str, Action]] = [
    ("list-other-cluster-deployments", lambda s: s.list(BUNDLE_DEPLOYMENT, OTHER)),
    ("get-other-cluster-deployment", lambda s: s.get(BUNDLE_DEPLOYMENT, "app", OTHER)),
    (
        "patch-other-cluster-deployment-status",
        lambda s: s.patch_status(BUNDLE_DEPLOYMENT, "app", {"status": {}}, OTHER),
    ),
    ("get-other-cluster-secret", lambda s: s.get(SECRET, CREDS, OTHER)),
    ("list-own-secrets", lambda s: s.list(SECRET, OWN)),
    ("list-all-secrets", lambda s: s.list(SECRET)),
    ("get-workspace-secret", lambda s: s.get(SECRET, CREDS, WS)),
    ("create-secret", lambda s: s.create(SECRET, {"metadata": {"name": "x", "namespace": OWN}})),
    ("list-bundles", lambda s: s.list(BUNDLE, WS)),
    (
        "create-bundle",
        lambda s: s.create(BUNDLE, bundle([], name="evil").to_wire()),
    ),
    ("patch-bundle", lambda s: s.patch(BUNDLE, "app", {"spec": {"paused": True}}, WS)),
    ("patch-own-deployment-spec", lambda s: s.patch(BUNDLE_DEPLOYMENT, "app", {"spec": {}}, OWN)),
    ("delete-own-deployment", lambda s: s.delete(BUNDLE_DEPLOYMENT, "app", OWN)),
    ("get-own-cluster", lambda s: s.get(CLUSTER, "eu-1", WS)),
    (
        "patch-other-cluster-status",
        lambda s: s.patch_status(CLUSTER, "us-1", {"status": {}}, WS),
    ),
    ("patch-own-cluster-spec", lambda s: s.patch(CLUSTER, "eu-1", {"spec": {}}, WS)),
    ("create-cluster", lambda s: s.create(CLUSTER, cluster("evil").to_wire())),
    ("list-namespaces", lambda s: s.list(NAMESPACE)),
    ("list-roles", lambda s: s.list(ROLE, OWN)),
]


@pytest.mark.parametrize("action", [a for _, a in REFUSED], ids=[i for i, _ in REFUSED])
def test_the_agent_is_refused_outside_its_own_deployments(fleet: HttpFleet, action: Action) -> None:
    with pytest.raises(Forbidden, match=agent_user(WS, "eu-1")):
        action(agent_store(fleet))


def test_the_agent_reads_its_deployments_and_its_credentials_by_name(fleet: HttpFleet) -> None:
    store = agent_store(fleet)
    assert [bd["metadata"]["name"] for bd in store.list(BUNDLE_DEPLOYMENT, OWN).items] == ["app"]
    assert store.get(SECRET, CREDS, OWN)["data"] == basic_auth_secret(CREDS, "u", "p")["data"]
    assert store.get(SECRET, AGENT_TOKEN_SECRET, OWN)["metadata"]["name"] == AGENT_TOKEN_SECRET


@pytest.fixture
def lone_agent(tmp_path: Path) -> Iterator[Callable[[PolicyRule | None], LoneAgent]]:
    started: list[LoneAgent] = []
    servers = [ApiServer().start(), ApiServer().start()]

    def start(without: PolicyRule | None) -> LoneAgent:
        management, downstream = servers
        namespace = cluster_namespace(WS, CLUSTER_NAME)
        management.store.create(NAMESPACE, {"metadata": {"name": WS}})
        management.store.create(CLUSTER, cluster(CLUSTER_NAME).to_wire())
        kubeconfig = agent_identity_by_hand(management, tmp_path, WS, CLUSTER_NAME, without)
        management.store.create(
            SECRET,
            {
                **basic_auth_secret(CREDS, "u", "p"),
                "metadata": {"name": CREDS, "namespace": namespace},
            },
        )
        management.store.create(BUNDLE_DEPLOYMENT, bd_object(secret=CREDS))
        stores = [
            KubeStore.from_kubeconfig(kubeconfig, None, FAST),
            KubeStore.from_kubeconfig(downstream.kubeconfig(tmp_path / "down"), None, FAST),
        ]
        host = Host(stores[0], workers=2, backoff_cap=0.5, name="lone-agent")
        agent = Agent(host, stores[0], stores[1], AgentConfig(workspace=WS, cluster=CLUSTER_NAME))
        lone = LoneAgent(management, agent, host, stores)
        started.append(lone)
        agent.start()
        host.start()
        return lone

    yield start
    for lone in started:
        lone.stop()
    for server in servers:
        server.stop()


def test_the_agent_works_with_exactly_its_rules(
    lone_agent: Callable[[PolicyRule | None], LoneAgent],
) -> None:
    lone = lone_agent(None)
    store = lone.management.store
    namespace = cluster_namespace(WS, CLUSTER_NAME)

    def reported() -> bool:
        bd_status = store.get(BUNDLE_DEPLOYMENT, "app", namespace).get("status") or {}
        cluster_status = store.get(CLUSTER, CLUSTER_NAME, WS).get("status") or {}
        return bool(bd_status.get("conditions")) and "agent" in cluster_status

    eventually(reported, "the deployment's status and the heartbeat")
    assert lone.management.denials() == []


@pytest.mark.parametrize("rule", AGENT_RULES, ids=[rule_id(r) for r in AGENT_RULES])
def test_without_any_one_rule_the_agent_is_refused(
    lone_agent: Callable[[PolicyRule | None], LoneAgent], rule: PolicyRule
) -> None:
    lone = lone_agent(rule)
    user = agent_user(WS, CLUSTER_NAME)
    eventually(lambda: bool(lone.management.denials(user)), "a refused request")


def remote_fleet(
    tmp_path: Path, http_fleets: list[HttpFleet], rules: list[PolicyRule]
) -> HttpFleet:
    """A remote-mode Cluster with its kubeconfig Secret and a Bundle, served by remote agents
    holding `rules`."""
    fleet = HttpFleet(tmp_path)
    http_fleets.append(fleet)
    kubeconfig = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()
    secret = {
        "metadata": {"name": "edge-kubeconfig", "namespace": WS},
        "data": {"value": kubeconfig},
    }
    fleet.put(SECRET, secret)
    edge = cluster("edge", agentMode="remote", kubeConfigSecret="edge-kubeconfig")
    fleet.put(CLUSTER, edge.to_wire())
    fleet.put(BUNDLE, bundle([{"clusterSelector": {}}]).to_wire())
    flux = fleet.serve_remote(rules)
    with contextlib.suppress(Forbidden):  # refused while filling the Cluster caches
        fleet.start(flux)
    return fleet


def test_remote_agents_work_with_exactly_their_rules(
    tmp_path: Path, http_fleets: list[HttpFleet]
) -> None:
    fleet = remote_fleet(tmp_path, http_fleets, list(REMOTE_AGENT_RULES))
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "the remote cluster to be Ready")
    assert fleet.management.denials() == []


@pytest.mark.parametrize("rule", REMOTE_AGENT_RULES, ids=[rule_id(r) for r in REMOTE_AGENT_RULES])
def test_without_any_one_rule_remote_agents_are_refused(
    tmp_path: Path, http_fleets: list[HttpFleet], rule: PolicyRule
) -> None:
    rules = [r for r in REMOTE_AGENT_RULES if r != rule]
    fleet = remote_fleet(tmp_path, http_fleets, rules)
    eventually(lambda: bool(fleet.management.denials(REMOTE_AGENT_USER)), "a refused request")
