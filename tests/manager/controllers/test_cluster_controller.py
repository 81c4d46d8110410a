"""The cluster controller: the cluster namespace, the agent identity, and cleanup on deletion."""

from __future__ import annotations

import threading

import pytest

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_ROLE,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SERVICE_ACCOUNT,
    Resource,
)
from bundler.core.agent.identity import (
    agent_identity,
    agent_namespace_role,
    identity_labels,
    namespace_object,
    workspace_role_name,
)
from bundler.core.naming import cluster_namespace
from bundler.manager.controllers.cluster_controller import CLUSTER_FINALIZER, ClusterController
from bundler.runtime.key import Key
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.world import (
    StartManager,
    create_world,
    deployments,
    settle,
    status_of,
    world,
)
from tests.support.stores import exists

NS = cluster_namespace(WS, "a")
EVERYTHING = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]


def test_cluster_gets_namespace_identity_and_finalizer(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a")))
    settle(start_manager(store))
    observed = store.get(CLUSTER, "a", WS)
    assert observed["metadata"]["finalizers"] == [CLUSTER_FINALIZER]
    assert observed["status"]["namespace"] == NS
    # The server adds its own label (kubernetes.io/metadata.name) to the manager's.
    labels = store.get(NAMESPACE, NS)["metadata"]["labels"]
    assert namespace_object(WS, "a")["metadata"]["labels"].items() <= labels.items()
    assert labels["kubernetes.io/metadata.name"] == NS
    for wanted in agent_identity(WS, "a", observed["metadata"]["uid"]):
        found = store.get(wanted.res, wanted.name, wanted.namespace)
        body = {k: v for k, v in wanted.body.items() if k != "metadata"}
        assert {k: found[k] for k in body} == body
        assert found["metadata"]["labels"] == wanted.body["metadata"]["labels"]


@pytest.mark.parametrize(
    ("res", "namespace", "name"),
    [
        (SERVICE_ACCOUNT, NS, "bundler-agent"),
        (ROLE_BINDING, NS, "bundler-agent"),
        (ROLE, WS, workspace_role_name("a")),
        (ROLE_BINDING, WS, workspace_role_name("a")),
    ],
    ids=["service-account", "namespace-binding", "workspace-role", "workspace-binding"],
)
def test_identity_deleted_by_hand_is_restored(
    store: MemoryStore, start_manager: StartManager, res: Resource, namespace: str, name: str
) -> None:
    create_world(store, world(cluster("a")))
    manager = start_manager(store)
    settle(manager)
    store.delete(res, name, namespace)
    settle(manager)
    assert exists(store, res, name, namespace)


def test_role_rules_changed_by_hand_are_restored(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a")))
    manager = start_manager(store)
    settle(manager)
    role = workspace_role_name("a")
    wanted = store.get(ROLE, role, WS)["rules"]
    store.patch(ROLE, role, {"rules": EVERYTHING}, WS)
    settle(manager)
    assert store.get(ROLE, role, WS)["rules"] == wanted


def test_the_shared_agent_cluster_role_is_written_once_and_restored_at_resync(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), cluster("b")))
    manager = start_manager(store)
    settle(manager)
    wanted = agent_namespace_role()
    assert store.get(CLUSTER_ROLE, "bundler-agent")["rules"] == wanted["rules"]
    assert not exists(store, ROLE, "bundler-agent", NS)  # no Role per cluster namespace
    store.patch(CLUSTER_ROLE, "bundler-agent", {"rules": EVERYTHING})
    manager.resync()
    settle(manager)
    assert store.get(CLUSTER_ROLE, "bundler-agent")["rules"] == wanted["rules"]


@pytest.mark.parametrize(
    ("labels", "removed"),
    [(identity_labels(WS, "a"), True), ({"team": "platform"}, False)],
    ids=["made-by-an-older-manager", "not-bundlers"],
)
def test_an_older_managers_namespace_role_is_retired(
    store: MemoryStore, start_manager: StartManager, labels: dict[str, str], removed: bool
) -> None:
    """An upgrade: the Role an older manager made in the cluster namespace goes (only when it
    carries the Cluster's labels), and the binding there is made again naming the ClusterRole."""
    store.create(NAMESPACE, namespace_object(WS, "a"))
    old_role = {"metadata": {"name": "bundler-agent", "namespace": NS, "labels": labels}}
    store.create(ROLE, {**old_role, "rules": agent_namespace_role()["rules"]})
    [binding] = [o for o in agent_identity(WS, "a") if o.res == ROLE_BINDING and o.namespace == NS]
    old_ref = {**binding.body["roleRef"], "kind": "Role"}
    store.create(ROLE_BINDING, {**binding.body, "roleRef": old_ref})
    create_world(store, world(cluster("a")))
    settle(start_manager(store))
    assert exists(store, ROLE, "bundler-agent", NS) is not removed
    assert store.get(ROLE_BINDING, "bundler-agent", NS)["roleRef"]["kind"] == "ClusterRole"


def test_deleting_a_cluster_removes_its_namespace_and_deployments(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), cluster("b"), bundle([{"clusterSelector": {}}])))
    manager = start_manager(store)
    settle(manager)
    assert set(deployments(store)) == {("a", "app"), ("b", "app")}
    store.delete(CLUSTER, "a", WS)
    settle(manager)
    assert set(deployments(store)) == {("b", "app")}
    assert not exists(store, CLUSTER, "a", WS)
    assert not exists(store, NAMESPACE, NS, None)
    assert not exists(store, ROLE, workspace_role_name("a"), WS)
    assert not exists(store, ROLE_BINDING, workspace_role_name("a"), WS)
    assert status_of(store, BUNDLE, "app")["display"]["readyClusters"] == "0/1"


def test_stray_deployments_are_removed(store: MemoryStore, start_manager: StartManager) -> None:
    create_world(store, world(cluster("a")))
    manager = start_manager(store)
    settle(manager)
    stray = {
        "metadata": {
            "name": "gone",
            "namespace": NS,
            "labels": {
                "bundler.dev/bundle-name": "gone",
                "bundler.dev/bundle-namespace": WS,
                "bundler.dev/cluster-name": "a",
                "bundler.dev/cluster-namespace": WS,
            },
        },
        "spec": {"options": {"helm": {}, "namespace": "x"}, "deploymentID": "s-1"},
    }
    store.create(BUNDLE_DEPLOYMENT, stray)
    settle(manager)
    assert not exists(store, BUNDLE_DEPLOYMENT, "gone", NS)


def test_recreated_cluster_gets_everything_again(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), bundle([{"clusterSelector": {}}])))
    manager = start_manager(store)
    settle(manager)
    store.delete(CLUSTER, "a", WS)
    settle(manager)
    store.create(CLUSTER, cluster("a").to_wire())
    settle(manager)
    assert set(deployments(store)) == {("a", "app")}
    assert exists(store, SERVICE_ACCOUNT, "bundler-agent", NS)


def test_a_deployment_created_while_strays_are_looked_for_is_kept(
    store: MemoryStore, start_manager: StartManager
) -> None:
    """The Bundles are read after the deployments: a Bundle and its first deployment that appear
    while the cluster controller looks for strays are not taken for a stray."""
    create_world(store, world(cluster("a")))
    manager = start_manager(store)
    settle(manager)
    scope = manager.ctx.scopes.all[0]
    index = scope.deployment_models
    in_namespace = index.in_namespace

    test_thread = threading.get_ident()
    created: list[str] = []

    def bundle_arrives_meanwhile(namespace: str) -> dict[str, BundleDeployment]:
        if threading.get_ident() == test_thread and not created:
            create_world(store, world(bundle([{"clusterSelector": {}}])))
            settle(manager)
            created.append(deployments(store)[("a", "app")]["metadata"]["uid"])
        return in_namespace(namespace)

    index.in_namespace = bundle_arrives_meanwhile  # type: ignore[method-assign]
    ClusterController(manager.ctx).reconcile(Key(WS, "a"))
    index.in_namespace = in_namespace  # type: ignore[method-assign]
    settle(manager)
    assert [bd["metadata"]["uid"] for bd in deployments(store).values()] == created
