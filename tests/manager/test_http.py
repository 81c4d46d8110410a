"""Acceptance: the manager over real HTTP against the test API server (KubeStore on 127.0.0.1)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE, SECRET
from bundler.apiserver import ApiServer, Verb
from bundler.commands.render import render_world
from bundler.core.naming import cluster_namespace
from bundler.inputs import load_world
from bundler.kube.store import KubeStore
from bundler.runtime.clock import ManualClock
from bundler.store.errors import NotFound
from tests.support.builders import WS, bundle, cluster
from tests.support.identities import MANAGER_USER
from tests.support.manager.registry_charts import basic_auth_secret
from tests.support.manager.world import (
    EXAMPLES,
    CountingStore,
    StartManager,
    create_world,
    deployments,
    essentials,
    settle_remote,
    status_of,
    world,
)

WRITE_VERBS = ("create", "update", "patch", "delete")
ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
REGION = {"values": {"region": "${ cluster.labels.region }"}}
CREDS = "registry-creds"


def writes(server: ApiServer) -> int:
    counts = server.request_counts()
    return sum(counts[verb] for verb in WRITE_VERBS)


def test_examples_give_what_render_gives(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    examples = load_world(EXAMPLES)
    create_world(admin, examples)
    settle_remote(start_manager(remote), server.store)
    expected, _ = render_world(examples, with_flux=False)
    assert sorted(map(essentials, expected), key=str) == sorted(
        (essentials(bd) for bd in deployments(server.store).values()), key=str
    )


def test_label_change_moves_deployments(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    prod = [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]
    create_world(admin, world(cluster("a", {"env": "prod"}), cluster("b"), bundle(prod)))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    assert set(deployments(server.store)) == {("a", "app")}
    admin.patch(CLUSTER, "a", {"metadata": {"labels": {"env": None}}}, WS)
    admin.patch(CLUSTER, "b", {"metadata": {"labels": {"env": "prod"}}}, WS)
    settle_remote(manager, server.store)
    assert set(deployments(server.store)) == {("b", "app")}


def test_deletions_clean_up(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    create_world(
        admin,
        world(cluster("a"), cluster("b"), bundle(ALL, name="one"), bundle(ALL, name="two")),
    )
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    assert len(deployments(server.store)) == 4
    admin.delete(BUNDLE, "one", WS)
    admin.delete(CLUSTER, "a", WS)
    settle_remote(manager, server.store)
    assert set(deployments(server.store)) == {("b", "two")}
    for res, name, namespace in (
        (BUNDLE, "one", WS),
        (CLUSTER, "a", WS),
        (NAMESPACE, cluster_namespace(WS, "a"), None),
    ):
        with pytest.raises(NotFound):
            server.store.get(res, name, namespace)


def test_template_error_leaves_other_clusters_deployed(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    clusters = [cluster("eu", {"region": "eu"}), cluster("us", {"region": "us"}), cluster("x")]
    create_world(admin, world(*clusters, bundle(ALL, helm=REGION)))
    settle_remote(start_manager(remote), server.store)
    assert set(deployments(server.store)) == {("eu", "app"), ("us", "app")}
    status = status_of(server.store, BUNDLE, "app")
    assert status["display"] == {"readyClusters": "0/3", "state": "ErrApplied", "version": "1.0.0"}
    failed = [e for e in status["nonReady"] if e["state"] == "ErrApplied"]
    assert [e["cluster"] for e in failed] == [f"{WS}/x"]
    assert "region" in failed[0]["message"]


def test_conflict_is_retried(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    create_world(admin, world(cluster("a"), cluster("b"), bundle(ALL)))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    server.inject_failure(409, verb=Verb.UPDATE, resource=BUNDLE_DEPLOYMENT)
    server.reset_counts()
    admin.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle_remote(manager, server.store)
    counts = server.request_counts()
    # Two deployments to update, one refused with 409 and retried after a fresh read.
    assert counts["update"] >= 3
    assert counts["get"] >= 1
    bd = server.store.get(BUNDLE_DEPLOYMENT, "app", cluster_namespace(WS, "a"))
    admin.update(BUNDLE_DEPLOYMENT, bd)  # the injected 409 was used up by the manager
    assert {
        k: bd["spec"]["options"]["helm"]["values"] for k, bd in deployments(server.store).items()
    } == {("a", "app"): {"v": 2}, ("b", "app"): {"v": 2}}


def test_gone_watch_relists(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    create_world(admin, world(cluster("a"), bundle([{"clusterName": "b"}])))
    server.inject_failure(410, verb=Verb.WATCH, resource=CLUSTER)
    server.reset_counts()
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    admin.create(CLUSTER, cluster("b").to_wire())
    settle_remote(manager, server.store)
    # Only a relist after the 410 and a new watch let the manager see the new cluster.
    assert set(deployments(server.store)) == {("b", "app")}
    assert server.request_counts()["list"] == len(manager.informers()) + 1


def test_unchanged_world_resync_writes_nothing(
    server: ApiServer,
    admin: KubeStore,
    remote: KubeStore,
    start_manager: StartManager,
    clock: ManualClock,
) -> None:
    create_world(admin, load_world(EXAMPLES))
    admin.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    private = bundle(ALL, name="private", helm={"secretRef": {"name": CREDS}})
    create_world(admin, world(private))
    manager = start_manager(remote, resync_period=60.0)
    settle_remote(manager, server.store)
    assert server.store.get(SECRET, CREDS, cluster_namespace(WS, "dev-1"))
    server.reset_counts()
    manager.resync()
    settle_remote(manager, server.store)
    clock.advance(61.0)
    settle_remote(manager, server.store)
    assert writes(server) == 0


def test_a_cold_start_writes_each_status_once(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    """Bundle passes wait for the cluster namespaces and roll-ups for the capped creations, so
    each Bundle's and Cluster's status (status.namespace included) is written once, and no
    update is refused."""
    clusters = [cluster(f"c{i}") for i in range(5)]
    capped = {"rolloutStrategy": {"maxNew": 2}}
    bundles = [bundle(ALL, name=f"b{i}", **capped) for i in range(3)]
    create_world(admin, world(*clusters, *bundles))
    server.reset_counts()
    settle_remote(start_manager(remote), server.store)
    mine = server.writes(MANAGER_USER)
    status_writes = Counter((w.resource, w.name) for w in mine if w.status)
    assert status_writes == {
        **{("clusters", c.metadata.name): 1 for c in clusters},
        **{("bundles", b.metadata.name): 1 for b in bundles},
    }
    assert status_of(server.store, CLUSTER, "c0")["namespace"] == cluster_namespace(WS, "c0")
    assert len(deployments(server.store)) == 15
    # Per cluster one Role (in the workspace, for its heartbeat); one ClusterRole for them all.
    created = Counter(w.resource for w in mine if w.verb is Verb.CREATE)
    assert (created["roles"], created["clusterroles"]) == (len(clusters), 1)
    counts, written = server.request_counts(), Counter(w.verb.value for w in mine)
    # No update or patch was refused (a conflict with a roll-up, retried from a fresh read).
    assert (counts["update"], counts["patch"]) == (written["update"], written["patch"])


def test_a_namespace_that_cannot_be_created_holds_no_bundle_back(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    """Bundle passes wait for a cluster namespace only until the cluster controller's pass ends,
    whether it created the namespace or failed to."""
    create_world(admin, world(cluster("a"), bundle(ALL)))
    server.inject_failure(500, verb=Verb.CREATE, resource=NAMESPACE, count=1000)
    settle_remote(start_manager(remote), server.store)
    assert not deployments(server.store)
    assert status_of(server.store, BUNDLE, "app")["display"]["readyClusters"] == "0/1"
    server.clear_failures()


def test_only_the_leader_writes(
    server: ApiServer,
    admin: KubeStore,
    connect: Callable[[], KubeStore],
    start_manager: StartManager,
    clock: ManualClock,
) -> None:
    create_world(admin, world(cluster("a"), bundle(ALL)))
    stores = [CountingStore(connect()), CountingStore(connect())]
    managers = [start_manager(s, leader_elect=True) for s in stores]
    for manager in managers:
        settle_remote(manager, server.store)
    leading = [m.is_leading for m in managers]
    assert sorted(leading) == [False, True]
    leader, follower = (0, 1) if leading[0] else (1, 0)
    assert stores[leader].total() > 0
    assert stores[follower].total() == 0
    assert set(deployments(server.store)) == {("a", "app")}

    managers[leader].stop()
    clock.advance(2.0)
    admin.create(CLUSTER, cluster("b").to_wire())
    settle_remote(managers[follower], server.store)
    assert managers[follower].is_leading
    assert set(deployments(server.store)) == {("a", "app"), ("b", "app")}


def test_a_changed_credentials_secret_reaches_the_copies(
    server: ApiServer, admin: KubeStore, remote: KubeStore, start_manager: StartManager
) -> None:
    admin.create(SECRET, basic_auth_secret(CREDS, "u", "old"))
    create_world(admin, world(cluster("a"), bundle(ALL, helm={"secretRef": {"name": CREDS}})))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    rotated = basic_auth_secret(CREDS, "u", "rotated")
    admin.patch(SECRET, CREDS, {"data": rotated["data"]}, WS)
    settle_remote(manager, server.store)
    copy = server.store.get(SECRET, CREDS, cluster_namespace(WS, "a"))
    assert copy["data"] == rotated["data"]
