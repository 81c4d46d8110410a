"""Events the manager writes on Bundles and Clusters, as `kubectl describe` shows them."""

from __future__ import annotations

from bundler.api.resources import BUNDLE, EVENT
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.world import StartManager, check_in, create_world, settle, world

OFFLINE_AFTER = 300.0


def told(store: MemoryStore) -> list[tuple[str, str, str, str]]:
    """(kind, name, type, reason) of every Event, oldest first."""
    events = sorted(
        store.list(EVENT, WS).items, key=lambda e: int(e["metadata"]["resourceVersion"])
    )
    return [
        (e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["reason"])
        for e in events
    ]


def test_rollouts_and_a_cluster_going_offline_and_back_are_told_once(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    create_world(store, world(cluster("a"), bundle([{"clusterSelector": {}}])))
    manager = start_manager(store, offline_after=OFFLINE_AFTER)
    settle(manager)
    # A Cluster's first status is no transition: no Event.
    assert told(store) == [("Bundle", "app", "Normal", "RolloutStarted")]
    check_in(store, clock, "a")
    settle(manager)
    clock.advance(OFFLINE_AFTER + 1)
    settle(manager)
    check_in(store, clock, "a")
    settle(manager)
    store.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle(manager)
    assert told(store) == [
        ("Bundle", "app", "Normal", "RolloutStarted"),
        ("Cluster", "a", "Warning", "ClusterOffline"),
        ("Cluster", "a", "Normal", "ClusterOnline"),
        ("Bundle", "app", "Normal", "RolloutStarted"),
    ]
    (event,) = [e for e in store.list(EVENT, WS).items if e["reason"] == "ClusterOffline"]
    assert event["message"].startswith("the agent has not checked in since ")
    assert event["involvedObject"]["uid"]


def test_a_restarted_manager_over_an_unchanged_world_tells_nothing(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), bundle([{"clusterSelector": {}}])))
    first = start_manager(store, offline_after=OFFLINE_AFTER)
    settle(first)
    first.stop()
    before = told(store)
    settle(start_manager(store, offline_after=OFFLINE_AFTER))
    assert told(store) == before
