"""ShardedStore: lists and watches show a shard only its own workspaces' objects (and objects of
no workspace); reads by name and writes pass through."""

from __future__ import annotations

from bundler.api.resources import BUNDLE, CLUSTER_ROLE, NAMESPACE
from bundler.core.shards import Shard
from bundler.store.memory import MemoryStore
from bundler.store.protocol import WatchEvent
from bundler.store.sharded import ShardedStore

# Shard 0 of 3 owns team-a; team-b is shard 2's (tests/core/test_shards.py pins the hash).
MINE, THEIRS = "team-a", "team-b"


def bundle(namespace: str) -> dict[str, object]:
    return {"metadata": {"name": "app", "namespace": namespace}, "spec": {}}


def test_lists_and_watches_keep_the_shards_own_objects() -> None:
    inner = MemoryStore()
    sharded = ShardedStore(inner, Shard(0, 3))
    seen: list[str] = []
    watch = sharded.watch(BUNDLE, lambda e: seen.append(e.object["metadata"]["namespace"]))
    for workspace in (MINE, THEIRS):
        inner.create(NAMESPACE, {"metadata": {"name": workspace}})
        inner.create(BUNDLE, bundle(workspace))
    inner.create(CLUSTER_ROLE, {"metadata": {"name": "everyones"}, "rules": []})
    watch.stop()
    assert seen == [MINE]
    assert [o["metadata"]["namespace"] for o in sharded.list(BUNDLE).items] == [MINE]
    assert [o["metadata"]["name"] for o in sharded.list(NAMESPACE).items] == [MINE]
    assert [o["metadata"]["name"] for o in sharded.list(CLUSTER_ROLE).items] == ["everyones"]
    assert sharded.get(BUNDLE, "app", THEIRS)["metadata"]["namespace"] == THEIRS


def test_writes_pass_through() -> None:
    inner = MemoryStore()
    sharded = ShardedStore(inner, Shard(0, 3))
    inner.create(NAMESPACE, {"metadata": {"name": THEIRS}})
    sharded.create(BUNDLE, bundle(THEIRS))
    sharded.patch(BUNDLE, "app", {"metadata": {"labels": {"a": "b"}}}, THEIRS)
    assert inner.get(BUNDLE, "app", THEIRS)["metadata"]["labels"] == {"a": "b"}
    sharded.delete(BUNDLE, "app", THEIRS)
    assert inner.list(BUNDLE).items == []


def test_watch_events_are_the_inner_stores() -> None:
    inner = MemoryStore()
    inner.create(NAMESPACE, {"metadata": {"name": MINE}})
    events: list[WatchEvent] = []
    watch = ShardedStore(inner, Shard(0, 3)).watch(BUNDLE, events.append)
    inner.create(BUNDLE, bundle(MINE))
    inner.delete(BUNDLE, "app", MINE)
    watch.stop()
    assert [e.type.value for e in events] == ["ADDED", "DELETED"]
