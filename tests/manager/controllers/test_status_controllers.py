"""Status roll-ups by the manager: one cluster in every state, and what the Bundle, each Cluster
and a ClusterGroup say about it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from bundler.api.meta import CONDITION_MESSAGE_MAX
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, CLUSTER_GROUP
from bundler.core.bounds import TRUNCATED_MARKER
from bundler.manager.app import Manager
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle, cluster, group
from tests.support.manager.world import (
    StartManager,
    check_in,
    create_world,
    deployment_of,
    report,
    settle,
    status_of,
    world,
)

OFFLINE_AFTER = 300.0
# Cluster name -> the state its deployment of "app" ends up in.
STATES = {
    "ready": "Ready",
    "not-ready": "NotReady",
    "wait-applied": "WaitApplied",
    "err-applied": "ErrApplied",
    "modified": "Modified",
    "out-of-sync": "OutOfSync",
    "offline": "Offline",
    "pending": "Pending",
    "template-error": "ErrApplied",
}
ZONE = {"values": {"zone": "${ cluster.labels.zone }"}}


def targets(out_of_sync_value: int) -> list[dict[str, Any]]:
    return [
        {"clusterName": "out-of-sync", "helm": {"values": {"v": out_of_sync_value}}},
        {"clusterSelector": {}},
    ]


@pytest.fixture
def every_state(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> Iterator[Manager]:
    """A bundle on nine clusters, each brought into one state as its agent would."""
    clusters = [
        cluster(
            name,
            {"zone": "z1", "env": "a" if i % 2 else "b"} if name != "template-error" else {},
            paused=name == "pending",
        )
        for i, name in enumerate(STATES)
    ]
    create_world(
        store,
        world(
            *clusters,
            group("even", {"matchLabels": {"env": "b"}}),
            bundle(targets(1), helm=ZONE),
        ),
    )
    manager = start_manager(store, offline_after=OFFLINE_AFTER)
    settle(manager)
    report(store, "ready")
    report(store, "out-of-sync")
    report(store, "not-ready", ready=False, ready_reason="UpgradeFailed")
    report(store, "err-applied", applied=False, deployed_error="boom")
    report(store, "modified", modified=True)
    report(store, "offline")
    settle(manager)
    # A paused cluster stages its next deployment but keeps running the current one.
    store.patch(CLUSTER, "out-of-sync", {"spec": {"paused": True}}, WS)
    store.patch(BUNDLE, "app", {"spec": {"targets": targets(2)}}, WS)
    settle(manager)
    clock.advance(OFFLINE_AFTER / 2)
    for name in STATES:
        if name != "offline":
            check_in(store, clock, name)
    clock.advance(OFFLINE_AFTER / 2 + 2)
    settle(manager)
    yield manager


def test_bundle_status_counts_every_state(store: MemoryStore, every_state: Manager) -> None:
    status = status_of(store, BUNDLE, "app")
    assert status["summary"] == {
        "desiredReady": 9,
        "ready": 1,
        "notReady": 1,
        "pending": 1,
        "waitApplied": 1,
        "errApplied": 2,
        "outOfSync": 1,
        "modified": 1,
        "offline": 1,
    }
    assert status["display"] == {"readyClusters": "1/9", "state": "ErrApplied", "version": "1.0.0"}
    assert [(e["cluster"].split("/")[1], e["state"]) for e in status["nonReady"]] == [
        ("err-applied", "ErrApplied"),
        ("template-error", "ErrApplied"),
        ("wait-applied", "WaitApplied"),
        ("offline", "Offline"),
        ("not-ready", "NotReady"),
        ("pending", "Pending"),
        ("out-of-sync", "OutOfSync"),
        ("modified", "Modified"),
    ]
    messages = {e["cluster"].split("/")[1]: e["message"] for e in status["nonReady"]}
    assert messages["err-applied"] == "ApplyFailed: boom"
    assert messages["not-ready"] == "UpgradeFailed"
    assert "zone" in messages["template-error"]
    ready = status["conditions"][0]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "ErrApplied")
    assert status["observedGeneration"] == 2


@pytest.mark.parametrize(("name", "state"), list(STATES.items()), ids=list(STATES))
def test_cluster_status_shows_its_bundle_state(
    store: MemoryStore, every_state: Manager, name: str, state: str
) -> None:
    status = status_of(store, CLUSTER, name)
    ready = state == "Ready"
    # The fixture pauses these two clusters: held by the pause, not by the rollout strategy.
    shown = "Paused" if name in ("out-of-sync", "pending") else state
    assert status["display"] == {"readyBundles": "1/1" if ready else "0/1", "state": shown}
    assert status["summary"]["desiredReady"] == 1
    assert [b["bundle"] for b in status["nonReadyBundles"]] == ([] if ready else [f"{WS}/app"])
    assert status["conditions"][0]["status"] == ("True" if ready else "False")
    assert status["namespace"].startswith(f"cluster-{WS}-{name}-")


def test_agent_status_is_left_alone(store: MemoryStore, every_state: Manager) -> None:
    assert status_of(store, CLUSTER, "ready")["agent"]["lastSeen"]
    assert "agent" not in status_of(store, CLUSTER, "offline")


def test_group_status_rolls_up_its_clusters(store: MemoryStore, every_state: Manager) -> None:
    members = [n for i, n in enumerate(STATES) if n != "template-error" and i % 2 == 0]
    status = status_of(store, CLUSTER_GROUP, "even")
    assert status["clusterCount"] == len(members)
    not_ready = [n for n in members if STATES[n] != "Ready"]
    assert status["nonReadyClusterCount"] == len(not_ready)
    assert sorted(status["nonReadyClusters"]) == sorted(f"{WS}/{n}" for n in not_ready)
    assert status["summary"]["desiredReady"] == len(members)
    assert status["display"]["readyClusters"] == f"{len(members) - len(not_ready)}/{len(members)}"


def test_offline_cluster_comes_back_when_its_agent_checks_in(
    store: MemoryStore, every_state: Manager, clock: ManualClock
) -> None:
    check_in(store, clock, "offline")
    settle(every_state)
    assert status_of(store, CLUSTER, "offline")["display"]["state"] == "Ready"
    assert status_of(store, BUNDLE, "app")["summary"]["offline"] == 0


def twelve_clusters_in_one_group(store: MemoryStore) -> list[str]:
    """Clusters c00..c11 in group "all", and Bundle "app" on every one of them."""
    names = [f"c{i:02}" for i in range(12)]
    create_world(
        store,
        world(
            *(cluster(n, {"env": "x"}) for n in names),
            group("all", {"matchLabels": {"env": "x"}}),
            bundle([{"clusterSelector": {}}]),
        ),
    )
    return names


def test_lists_stop_at_ten(store: MemoryStore, start_manager: StartManager) -> None:
    names = twelve_clusters_in_one_group(store)
    settle(start_manager(store))
    status = status_of(store, BUNDLE, "app")
    assert status["summary"]["waitApplied"] == 12
    assert [e["cluster"] for e in status["nonReady"]] == [f"{WS}/{n}" for n in names[:10]]
    group_status = status_of(store, CLUSTER_GROUP, "all")
    assert (group_status["clusterCount"], group_status["nonReadyClusterCount"]) == (12, 12)
    assert len(group_status["nonReadyClusters"]) == 10


def _leaves(store: MemoryStore, name: str) -> None:
    store.patch(CLUSTER, name, {"metadata": {"labels": {"env": "y"}}}, WS)


def _deleted(store: MemoryStore, name: str) -> None:
    store.delete(CLUSTER, name, WS)


def _ready(store: MemoryStore, name: str) -> None:
    report(store, name)


def _paused(store: MemoryStore, name: str) -> None:
    store.patch(CLUSTER, name, {"spec": {"paused": True}}, WS)


@pytest.mark.parametrize(
    ("change", "count", "not_ready"),
    [
        pytest.param(_leaves, 11, 11, id="a member's labels no longer match"),
        pytest.param(_deleted, 11, 11, id="a member is deleted"),
        pytest.param(_ready, 12, 11, id="a member's deployment is ready"),
        pytest.param(_paused, 12, 12, id="a member is paused"),
    ],
)
def test_a_group_rolls_up_one_clusters_change_as_a_walk_would(
    store: MemoryStore, start_manager: StartManager, change: Any, count: int, not_ready: int
) -> None:
    names = twelve_clusters_in_one_group(store)
    manager = start_manager(store)
    settle(manager)
    change(store, names[3])
    settle(manager)
    status = status_of(store, CLUSTER_GROUP, "all")
    assert (status["clusterCount"], status["nonReadyClusterCount"]) == (count, not_ready)
    # A resync walks every group's workspace again: it finds nothing to correct.
    walks = manager.group_walks
    manager.resync()
    settle(manager)
    assert manager.group_walks > walks
    assert status_of(store, CLUSTER_GROUP, "all") == status


def test_bundle_targeting_nothing_says_so(store: MemoryStore, start_manager: StartManager) -> None:
    create_world(store, world(cluster("a"), bundle([{"clusterName": "nope"}])))
    settle(start_manager(store))
    status = status_of(store, BUNDLE, "app")
    assert status["display"] == {"readyClusters": "0/0", "state": "NoTargets", "version": "1.0.0"}
    assert status["conditions"][0]["reason"] == "NoTargets"


def references(store: MemoryStore, name: str = "app") -> dict[str, Any] | None:
    conditions = status_of(store, BUNDLE, name).get("conditions") or []
    return next((c for c in conditions if c["type"] == "References"), None)


def test_bundle_status_says_when_a_cluster_group_or_dependency_does_not_exist(
    store: MemoryStore, start_manager: StartManager
) -> None:
    targets: list[dict[str, Any]] = [{"clusterGroup": "prodution"}, {"clusterSelector": {}}]
    create_world(store, world(cluster("a"), bundle(targets, dependsOn=[{"name": "certs"}])))
    manager = start_manager(store)
    settle(manager)
    found = references(store)
    assert found is not None
    assert (found["status"], found["reason"]) == ("False", "ReferenceNotFound")
    assert found["message"] == (
        f"spec.targets[0].clusterGroup: ClusterGroup {WS}/prodution does not exist, so it targets "
        f"nothing; spec.dependsOn[0]: Bundle {WS}/certs does not exist, so no cluster can "
        "satisfy it"
    )
    create_world(store, world(group("prodution", {}), bundle([{"clusterSelector": {}}], "certs")))
    settle(manager)
    assert references(store) is None
    assert references(store, "certs") is None


def test_all_ready_bundle_is_ready(store: MemoryStore, start_manager: StartManager) -> None:
    create_world(store, world(cluster("a"), cluster("b"), bundle([{"clusterSelector": {}}])))
    manager = start_manager(store)
    settle(manager)
    report(store, "a")
    report(store, "b")
    settle(manager)
    status = status_of(store, BUNDLE, "app")
    assert status["display"] == {"readyClusters": "2/2", "state": "Ready", "version": "1.0.0"}
    assert status["nonReady"] == []
    assert status["conditions"][0]["status"] == "True"
    assert deployment_of(store, "a")["status"]["ready"] is True


def test_an_offline_agent_makes_its_cluster_not_ready_even_without_bundles(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    create_world(store, world(cluster("idle")))
    manager = start_manager(store, offline_after=OFFLINE_AFTER)
    check_in(store, clock, "idle")
    settle(manager)
    assert status_of(store, CLUSTER, "idle")["conditions"][0]["status"] == "True"
    clock.advance(OFFLINE_AFTER + 1)
    settle(manager)
    (ready,) = status_of(store, CLUSTER, "idle")["conditions"]
    assert (ready["status"], ready["reason"]) == ("False", "Offline")
    assert "has not checked in since" in ready["message"]
    check_in(store, clock, "idle")
    settle(manager)
    assert status_of(store, CLUSTER, "idle")["conditions"][0]["status"] == "True"


def test_a_cluster_name_too_long_for_labels_is_not_ready_and_not_targeted(
    store: MemoryStore, start_manager: StartManager
) -> None:
    long_name = "c" * 70
    create_world(store, world(cluster(long_name), cluster("ok"), bundle([{"clusterSelector": {}}])))
    settle(start_manager(store))
    (ready,) = status_of(store, CLUSTER, long_name)["conditions"]
    assert (ready["status"], ready["reason"]) == ("False", "InvalidName")
    assert "label values" in ready["message"]
    assert status_of(store, BUNDLE, "app")["display"]["readyClusters"] == "0/1"


@pytest.mark.parametrize(
    ("res", "name", "field"),
    [(BUNDLE, "app", "display"), (CLUSTER, "ready", "display"), (CLUSTER_GROUP, "even", "display")],
    ids=["bundle", "cluster", "group"],
)
def test_status_written_by_someone_else_is_restored(
    store: MemoryStore, every_state: Manager, res: Any, name: str, field: str
) -> None:
    """The roll-up is level-triggered on status too: a status the manager did not compute (a
    write from a stale cache, another writer) is corrected without waiting for the resync."""
    wanted = status_of(store, res, name)[field]
    store.patch_status(res, name, {"status": {field: {"state": "Forged"}}}, WS)
    settle(every_state)
    assert status_of(store, res, name)[field] == wanted


# What a real API server stores at most (etcd's default request limit), and what an agent wrote.
OBJECT_LIMIT = int(1.5 * 1024 * 1024)
HUGE_MESSAGE = "é" * 1024 * 1024  # 2 MiB of UTF-8


def report_huge_failure(store: MemoryStore, name: str) -> None:
    """The agent of cluster `name` reports the release failed, with a 2 MiB message."""
    bd = deployment_of(store, name, "app")
    failed = {"type": "Ready", "status": "False", "reason": "UpgradeFailed"}
    status = {
        "appliedDeploymentID": bd["spec"]["deploymentID"],
        "ready": False,
        "conditions": [{**failed, "message": HUGE_MESSAGE}],
    }
    meta = bd["metadata"]
    store.patch_status(BUNDLE_DEPLOYMENT, meta["name"], {"status": status}, meta["namespace"])


def test_huge_agent_messages_are_truncated_in_every_roll_up(
    store: MemoryStore, start_manager: StartManager
) -> None:
    names = twelve_clusters_in_one_group(store)
    manager = start_manager(store)
    settle(manager)
    for name in names:
        report_huge_failure(store, name)
    settle(manager)
    statuses = [
        status_of(store, BUNDLE, "app"),
        status_of(store, CLUSTER, "c00"),
        status_of(store, CLUSTER_GROUP, "all"),
    ]
    for status in statuses:
        assert len(json.dumps(status, ensure_ascii=False).encode()) < OBJECT_LIMIT // 4
        for written in status["conditions"]:
            assert written["message"].endswith(TRUNCATED_MARKER)
    listed = [*statuses[0]["nonReady"], *statuses[1]["nonReadyBundles"]]
    assert len(listed) == 11
    for entry in listed:
        assert entry["message"].startswith("UpgradeFailed: éé")
        assert entry["message"].endswith(TRUNCATED_MARKER)
        assert len(entry["message"].encode()) <= CONDITION_MESSAGE_MAX


@pytest.mark.parametrize(
    ("flux", "expected"),
    [
        ({"supported": True}, ("True", "Supported")),
        (
            {"supported": False, "reason": "FluxTooOld", "message": "Flux is too old: upgrade"},
            ("False", "FluxTooOld"),
        ),
        (
            {"supported": False, "reason": "FluxNotInstalled", "message": "install Flux"},
            ("False", "FluxNotInstalled"),
        ),
    ],
    ids=["supported", "too-old", "not-installed"],
)
def test_the_agents_flux_check_is_a_condition_on_its_cluster(
    store: MemoryStore, start_manager: StartManager, flux: dict[str, Any], expected: tuple[str, str]
) -> None:
    create_world(store, world(cluster("edge"), bundle([{"clusterSelector": {}}])))
    store.patch_status(CLUSTER, "edge", {"status": {"agent": {"flux": flux}}}, WS)
    settle(start_manager(store))
    conditions = {c["type"]: c for c in status_of(store, CLUSTER, "edge")["conditions"]}
    found = conditions["FluxSupported"]
    assert (found["status"], found["reason"]) == expected
    assert found["message"] == flux.get("message", found["message"])
    assert "Ready" in conditions


def test_no_flux_condition_before_an_agent_looked(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("edge"), bundle([{"clusterSelector": {}}])))
    settle(start_manager(store))
    types = [c["type"] for c in status_of(store, CLUSTER, "edge")["conditions"]]
    assert types and "FluxSupported" not in types


def test_a_later_flux_report_reaches_the_condition(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("edge"), bundle([{"clusterSelector": {}}])))
    manager = start_manager(store)
    settle(manager)
    missing = {"supported": False, "reason": "FluxNotInstalled", "message": "install Flux"}
    store.patch_status(CLUSTER, "edge", {"status": {"agent": {"flux": missing}}}, WS)
    settle(manager)
    conditions = {c["type"]: c for c in status_of(store, CLUSTER, "edge")["conditions"]}
    assert conditions["FluxSupported"]["reason"] == "FluxNotInstalled"
