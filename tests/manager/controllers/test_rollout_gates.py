"""Acceptance for the rollout gates, the manager over real HTTP with a manual clock: a bake holds
the next partition, an approval of the current generation lets it go, maintenance windows hold
clusters (and a deleted Bundle's releases), and invalid gates are told on the object."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER
from bundler.core.approvals import APPROVE
from bundler.runtime.clock import ManualClock
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.http_stores import admin, connect, remote, server  # noqa: F401
from tests.support.manager.rollout_http import ALL, Http, http_fixture  # noqa: F401
from tests.support.manager.world import deployment_of, report, status_of

# Never offline within these tests: an offline cluster never holds a partition back.
OFFLINE_AFTER = 30 * 86400.0
PARTITIONS = [
    {"name": "canary", "clusterName": "c0"},
    {"name": "rest", "clusterSelector": {}},
]
NAMES = ["c0", "c1", "c2"]
# The manual clock starts on Monday 1 January 2024, 00:00 UTC: this window opens at 02:00.
NIGHTLY = {"windows": [{"cron": "0 2 * * *", "duration": "1h"}]}


def gate_of(http: Http) -> tuple[str | None, str | None]:
    """The GATE column, and the RolloutGated condition's reason (None: absent)."""
    status = status_of(http.server.store, BUNDLE, "app")
    gated = next((c for c in status["conditions"] if c["type"] == "RolloutGated"), None)
    return status["display"].get("gate"), None if gated is None else gated["reason"]


def partitions(http: Http) -> dict[str, str]:
    rollout = status_of(http.server.store, BUNDLE, "app")["rollout"]
    return {p["name"]: p["state"] for p in rollout["partitions"]}


def report_all(http: Http) -> None:
    for name in http.deployed():
        report(http.admin, name)
    http.settle()


def start(http: Http, strategy: dict[str, Any], *clusters: Any, **spec: Any) -> None:
    fleet = clusters or tuple(cluster(n) for n in NAMES)
    rollout = {"partitions": PARTITIONS, **strategy}
    http.start(*fleet, bundle(ALL, rolloutStrategy=rollout, **spec), offline_after=OFFLINE_AFTER)


def test_a_bake_holds_the_next_partition_until_it_ends(http: Http, clock: ManualClock) -> None:
    start(http, {"bakeTime": "10m"})
    assert http.deployed() == {"c0"}
    report_all(http)
    assert partitions(http) == {"canary": "Baking", "rest": "Waiting"}
    assert gate_of(http) == ("Baking(canary)", "Baking")
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "Baking")
    assert "waits for partition 'canary' to bake" in ready["message"]
    clock.advance(300.0)
    http.settle()
    assert http.deployed() == {"c0"}
    # The manager looks again when the bake ends, without any other event.
    clock.advance(301.0)
    http.settle()
    assert http.deployed() == set(NAMES)
    report_all(http)
    assert partitions(http)["canary"] == "Ready"
    assert partitions(http)["rest"] == "Baking"
    assert http.ready()["status"] == "True"  # nothing waits for rest's bake
    assert gate_of(http) == (None, None)


def test_a_cluster_not_ready_during_the_bake_halts_the_rollout(http: Http) -> None:
    start(http, {"bakeTime": "10m", "onFailure": {"action": "Halt"}})
    report_all(http)
    report(http.admin, "c0", ready=False, ready_reason="UpgradeFailed")
    http.settle()
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "RolloutHalted")
    assert f"{WS}/c0: not Ready during its partition's bake: UpgradeFailed" in ready["message"]


def test_an_approval_counts_for_its_generation_only(http: Http) -> None:
    start(http, {"approval": {"partitions": ["rest"]}})
    assert http.deployed() == {"c0"}
    report_all(http)
    assert gate_of(http) == ("WaitingForApproval(rest)", "WaitingForApproval")
    ready = http.ready()
    assert ready["reason"] == "WaitingForApproval"
    assert f"bundler rollout approve {WS}/app --partition rest" in ready["message"]
    nonready = status_of(http.server.store, BUNDLE, "app")["nonReady"]
    assert nonready
    assert all(n["message"].startswith("WaitingForApproval: ") for n in nonready)
    http.patch_bundle({"metadata": {"annotations": {APPROVE: str(http.generation())}}})
    assert http.deployed() == set(NAMES)
    report_all(http)
    assert gate_of(http) == (None, None)
    # A new spec: canary gets it, the old approval does not let rest have it.
    http.patch_bundle({"spec": {"helm": {"values": {"v": 2}}}})
    report_all(http)
    assert http.values(NAMES) == [{"v": 2}, None, None]
    assert gate_of(http)[0] == "WaitingForApproval(rest)"
    approval = f'{{"generation": {http.generation()}, "partitions": ["rest"]}}'
    http.patch_bundle({"metadata": {"annotations": {APPROVE: approval}}})
    assert http.values(NAMES) == [{"v": 2}] * 3


def test_outside_its_window_a_cluster_gets_nothing_new(http: Http, clock: ManualClock) -> None:
    night_owl = cluster("c1", schedule=NIGHTLY)
    http.start(cluster("c0"), night_owl, bundle(ALL), offline_after=OFFLINE_AFTER)
    assert http.deployed() == {"c0"}
    report_all(http)
    assert gate_of(http) == (f"OutsideWindow({WS}/c1)", "OutsideWindow")
    (held,) = status_of(http.server.store, BUNDLE, "app")["nonReady"]
    assert held["cluster"] == f"{WS}/c1"
    assert held["message"] == (
        "OutsideWindow: outside the Cluster's maintenance window (opens 2024-01-01T02:00:00Z)"
    )
    shown = status_of(http.server.store, CLUSTER, "c1")["schedule"]
    assert shown == {
        "open": False,
        "window": {"start": "2024-01-01T02:00:00Z", "end": "2024-01-01T03:00:00Z"},
        "message": "",
    }
    clock.advance(2 * 3600.0)
    http.settle()
    assert http.deployed() == {"c0", "c1"}
    assert status_of(http.server.store, CLUSTER, "c1")["schedule"]["open"] is True
    # Once the window closes, a new spec reaches c0 only.
    clock.advance(3600.0)
    report_all(http)
    http.patch_bundle({"spec": {"helm": {"values": {"v": 2}}}})
    assert http.values(["c0", "c1"]) == [{"v": 2}, None]


def test_a_deleted_bundle_waits_for_the_window_but_an_untargeted_cluster_does_not(
    http: Http, clock: ManualClock
) -> None:
    clusters = [cluster(n, {"env": "prod"}) for n in NAMES]
    http.start(*clusters, bundle(ALL), offline_after=OFFLINE_AFTER)
    assert http.deployed() == set(NAMES)
    http.patch_bundle({"spec": {"schedule": NIGHTLY}})
    http.admin.patch(CLUSTER, "c2", {"metadata": {"labels": {"env": "gone"}}}, WS)
    http.patch_bundle(
        {"spec": {"targets": [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]}}
    )
    # c2 left the targets: its release goes now, window or not.
    assert http.deployed() == {"c0", "c1"}
    http.admin.delete(BUNDLE, "app", WS)
    http.settle()
    assert http.deployed() == {"c0", "c1"}
    assert http.server.store.get(BUNDLE, "app", WS)["metadata"]["deletionTimestamp"]
    clock.advance(2 * 3600.0)
    http.settle()
    assert http.deployed() == set()


# (id, the Bundle's spec fields, the field the Ready condition names)
INVALID = [
    ("bad-cron", {"schedule": {"windows": [{"cron": "0 2 * *", "duration": "1h"}]}},
     "spec.schedule.windows[0].cron"),
    ("unknown-partition", {"rolloutStrategy": {"partitions": PARTITIONS,
                                               "approval": {"partitions": ["prod"]}}},
     "spec.rolloutStrategy.approval.partitions[0]"),
    ("bad-cel", {"targets": [{"clusterSelector": {}, "healthChecks": [
        {"kind": "Deployment", "name": "web", "current": "status.("}]}]},
     "spec.targets[0].healthChecks[0].current"),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "field"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_gates_are_the_bundles_invalid_spec(
    http: Http, spec: dict[str, Any], field: str
) -> None:
    targets = spec.pop("targets", ALL)
    http.start(cluster("c0"), bundle(targets, **spec), offline_after=OFFLINE_AFTER)
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert f"Bundle {WS}/app: {field}: " in ready["message"]
    assert http.deployed() == set()


def test_a_cluster_with_an_invalid_schedule_gets_nothing(http: Http) -> None:
    broken = cluster("c1", schedule={"timeZone": "Mars/Olympus"})
    http.start(cluster("c0"), broken, bundle(ALL), offline_after=OFFLINE_AFTER)
    assert http.deployed() == {"c0"}
    ready = next(
        c for c in status_of(http.server.store, CLUSTER, "c1")["conditions"] if c["type"] == "Ready"
    )
    assert ready["reason"] == "InvalidSpec"
    assert f"Cluster {WS}/c1: spec.schedule.timeZone: 'Mars/Olympus'" in ready["message"]
    assert deployment_of(http.server.store, "c0")["spec"]["deploymentID"]
