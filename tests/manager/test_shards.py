"""Sharded managers over real HTTP: three shards (each its own ServiceAccount, so the server's log
of writes says who wrote what) split a fleet of six workspaces; no object is written by two
shards, every write is of a workspace the writer owns, and the outcome is a single manager's.
A shard's leader that dies without a word is replaced by its standby through the shard's Lease."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_GROUP,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.apiserver import ApiServer
from bundler.apiserver.context import Write
from bundler.core.naming import cluster_namespace
from bundler.core.rbac import manager_rules
from bundler.core.shards import Shard, shard_of
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.manager.app import Manager
from bundler.manager.copies.secret_copies import LABEL_SECRET_COPY
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj, Store
from bundler.store.sharded import ShardedStore
from tests.support.builders import bundle, cluster
from tests.support.identities import MANAGER_NAMESPACE, admin_store, service_account_kubeconfig
from tests.support.manager.registry_charts import basic_auth_secret
from tests.support.manager.world import WAIT, StartManager, essentials, settle_remote
from tests.support.stores import Unreachable

SHARDS = 3
# Two workspaces for shard 0, one for shard 1, three for shard 2 (pinned by test_shards_own).
WORKSPACES = ("team-a", "team-b", "team-c", "team-d", "team-e", "team-f")
CLUSTERS = {"c1": {"env": "prod"}, "c2": {"env": "dev"}}
CREDS = "creds"
FAST = KubeOptions(retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0))
STATUS_FIELDS = ("summary", "display", "nonReady", "nonReadyBundles", "clusterCount")


def placed(obj: Any, workspace: str) -> Obj:
    """A builder's object as wire JSON, moved to `workspace`."""
    wire: Obj = obj.to_wire() if hasattr(obj, "to_wire") else dict(obj)
    wire["metadata"] = {**wire["metadata"], "namespace": workspace}
    return wire


def workspace_objects(workspace: str) -> list[tuple[Resource, Obj]]:
    prod: Obj = {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "ClusterGroup",
        "metadata": {"name": "prod"},
        "spec": {"selector": {"matchLabels": {"env": "prod"}}},
    }
    name_values = {"values": {"name": "${ cluster.name }"}}
    return [
        (SECRET, placed(basic_auth_secret(CREDS, "u", "p"), workspace)),
        *[(CLUSTER, placed(cluster(n, labels), workspace)) for n, labels in CLUSTERS.items()],
        (CLUSTER_GROUP, placed(prod, workspace)),
        (BUNDLE, placed(bundle([{"clusterSelector": {}}], "web", name_values), workspace)),
        (
            BUNDLE,
            placed(
                bundle([{"clusterGroup": "prod"}], name="db", helm={"secretRef": {"name": CREDS}}),
                workspace,
            ),
        ),
    ]


def fill(store: Store) -> None:
    for workspace in WORKSPACES:
        store.create(NAMESPACE, {"metadata": {"name": workspace}})
        for res, body in workspace_objects(workspace):
            store.create(res, body)


def new_server(clock: ManualClock) -> ApiServer:
    server = ApiServer(MemoryStore(clock=clock.now, require_namespaces=True))
    server.start()
    server.store.create(NAMESPACE, {"metadata": {"name": "default"}})
    return server


@pytest.fixture
def servers(clock: ManualClock) -> Iterator[list[ApiServer]]:
    """Two servers: one for the shards, one for a single manager to compare with."""
    started = [new_server(clock), new_server(clock)]
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def stores() -> Iterator[Callable[[Path], KubeStore]]:
    opened: list[KubeStore] = []

    def open_store(kubeconfig: Path) -> KubeStore:
        opened.append(KubeStore.from_kubeconfig(kubeconfig, None, FAST))
        return opened[-1]

    yield open_store
    for store in opened:
        store.close()


def user(name: str) -> str:
    return f"system:serviceaccount:{MANAGER_NAMESPACE}:{name}"


def owner_of_namespace() -> dict[str, str]:
    """The workspace each namespace the managers write in belongs to."""
    owners = {ws: ws for ws in WORKSPACES}
    for ws in WORKSPACES:
        for name in (*CLUSTERS, "c3"):
            owners[cluster_namespace(ws, name)] = ws
    return owners


def workspace_written(write: Write) -> str | None:
    """The workspace a write was about; None for a Lease (the shard's own) and for the agents'
    ClusterRole (every shard's, written by the first that needs it)."""
    if write.resource in ("leases", "clusterroles"):
        return None
    owners = owner_of_namespace()
    return owners[write.name] if write.resource == "namespaces" else owners[write.namespace]


def written(writes: list[Write]) -> set[tuple[str, str, str]]:
    return {(w.resource, w.namespace, w.name) for w in writes}


def objects_written(server: ApiServer, name: str) -> int:
    """How many writes of objects (not of its Lease) a manager made."""
    return sum(1 for w in server.writes(user(name)) if w.resource != "leases")


def outcome(store: Store) -> dict[str, Any]:
    """What the managers produced, comparable between two servers."""
    deployments = sorted(map(essentials, store.list(BUNDLE_DEPLOYMENT).items), key=str)
    statuses = {
        (res.kind, o["metadata"]["namespace"], o["metadata"]["name"]): {
            k: v for k, v in (o.get("status") or {}).items() if k in STATUS_FIELDS
        }
        for res in (BUNDLE, CLUSTER, CLUSTER_GROUP)
        for o in store.list(res).items
    }
    copies = {
        (s["metadata"]["namespace"], s["metadata"]["name"])
        for s in store.list(SECRET).items
        if LABEL_SECRET_COPY in (s["metadata"].get("labels") or {})
    }
    namespaces = {n["metadata"]["name"] for n in store.list(NAMESPACE).items}
    return {"bds": deployments, "statuses": statuses, "copies": copies, "ns": namespaces}


def test_shards_own_the_workspaces_the_fleet_is_split_by() -> None:
    owned = [[ws for ws in WORKSPACES if Shard(i, SHARDS).owns(ws)] for i in range(SHARDS)]
    assert owned == [["team-a", "team-d"], ["team-e"], ["team-b", "team-c", "team-f"]]


def test_three_shards_split_the_fleet_and_a_standby_takes_a_dead_leaders_shard(
    servers: list[ApiServer],
    stores: Callable[[Path], KubeStore],
    start_manager: StartManager,
    clock: ManualClock,
    tmp_path: Path,
) -> None:
    server, reference = servers
    rules = manager_rules(SHARDS)
    names = [f"bundler-manager-{i}" for i in range(SHARDS)]
    kubeconfigs = [service_account_kubeconfig(server, tmp_path, n, rules) for n in names]
    standby_name = "bundler-manager-1-standby"
    standby_kubeconfig = service_account_kubeconfig(server, tmp_path, standby_name, rules)
    with admin_store(server, tmp_path) as admin:
        fill(admin)

    def start(shard: int, store: Store) -> Manager:
        return start_manager(store, leader_elect=True, shard=Shard(shard, SHARDS))

    doomed = Unreachable(stores(kubeconfigs[1]), "shard 1's first replica")
    leaders = [start(0, stores(kubeconfigs[0])), start(1, doomed), start(2, stores(kubeconfigs[2]))]
    standby = start(1, stores(standby_kubeconfig))
    for index, manager in [*enumerate(leaders), (1, standby)]:
        settle_remote(manager, ShardedStore(server.store, Shard(index, SHARDS)))
    assert [m.is_leading for m in leaders] == [True, True, True]
    assert not standby.is_leading

    # Every shard wrote, only its own workspaces' objects, and no object was written by two.
    writes = [server.writes(user(n)) for n in names]
    for index, done in enumerate(writes):
        assert done, f"shard {index} wrote nothing"
        assert {shard_of(ws, SHARDS) for w in done if (ws := workspace_written(w))} == {index}
    for a in range(SHARDS):
        for b in range(a + 1, SHARDS):
            assert written(writes[a]) & written(writes[b]) == set()
    assert server.writes(user(standby_name)) == []

    # The same fleet, one manager: the same deployments, statuses, copies and namespaces.
    elsewhere = tmp_path / "reference"
    elsewhere.mkdir()
    single_kubeconfig = service_account_kubeconfig(reference, elsewhere, "bundler-manager", rules)
    with admin_store(reference, elsewhere) as admin:
        fill(admin)
    single = start_manager(stores(single_kubeconfig))
    settle_remote(single, reference.store)
    sharded = outcome(server.store)
    assert len(sharded["bds"]) == len(WORKSPACES) * (len(CLUSTERS) + 1)
    assert sharded == outcome(reference.store)

    # Shard 1's leader dies: no more requests, no Lease released. Its workspace changes meanwhile.
    doomed.down = True
    leaders[1].stop(WAIT)
    (team,) = [ws for ws in WORKSPACES if Shard(1, SHARDS).owns(ws)]
    with admin_store(server, tmp_path) as admin:
        admin.create(CLUSTER, placed(cluster("c3", {"env": "prod"}), team))
    before = {n: objects_written(server, n) for n in (names[0], names[2])}
    for _ in range(9):  # past the Lease's 15 s: the standby takes it over
        clock.advance(2.0)
        settle_remote(standby, ShardedStore(server.store, Shard(1, SHARDS)))
    assert standby.is_leading
    expected = {("c3", bundle_name) for bundle_name in ("web", "db")}
    c3_namespace = cluster_namespace(team, "c3")
    created = {
        ("c3", w.name)
        for w in server.writes(user(standby_name))
        if w.resource == "bundledeployments" and w.namespace == c3_namespace
    }
    assert created == expected
    assert {n: objects_written(server, n) for n in before} == before, "other shards stay out"
    taken_over = server.writes(user(standby_name))
    assert {shard_of(ws, SHARDS) for w in taken_over if (ws := workspace_written(w))} == {1}
