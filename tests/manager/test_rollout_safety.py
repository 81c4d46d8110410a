"""Acceptance for bundler's rollout safety rules, the manager over real HTTP: offline clusters
never block a rollout, mass deletion is held, and a failing rollout halts or rolls back."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE
from bundler.runtime.clock import ManualClock
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.http_stores import admin, connect, remote, server  # noqa: F401
from tests.support.manager.rollout_http import ALL, Http, http_fixture  # noqa: F401
from tests.support.manager.world import check_in, deployment_of, report, status_of

OFFLINE_AFTER = 300.0
FLEET = [f"c{i}" for i in range(8)]
PROD = [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]
TYPO = [{"clusterSelector": {"matchLabels": {"env": "prd"}}}]


# (offlineClusters, the values each cluster runs after v=2 while c1 and c2 are offline)
OFFLINE_CASES: list[tuple[str, str | None, list[Any]]] = [
    ("default-ignores-offline-clusters", None, [{"v": 2}] * 3),
    ("block-keeps-fleets-behaviour", "Block", [{"v": 2}, None, None]),
]


@pytest.mark.parametrize(
    ("offline_clusters", "expected"),
    [c[1:] for c in OFFLINE_CASES],
    ids=[c[0] for c in OFFLINE_CASES],
)
def test_offline_clusters_do_not_block_a_rollout(
    http: Http, clock: ManualClock, offline_clusters: str | None, expected: list[Any]
) -> None:
    names = FLEET[:3]
    strategy: dict[str, Any] = {"maxUnavailable": 1}
    if offline_clusters is not None:
        strategy["offlineClusters"] = offline_clusters
    clusters = [cluster(n) for n in names]
    http.start(*clusters, bundle(ALL, rolloutStrategy=strategy), offline_after=OFFLINE_AFTER)
    for name in names:
        check_in(http.admin, clock, name)
        report(http.admin, name)
    http.settle()
    clock.advance(OFFLINE_AFTER + 2)
    check_in(http.admin, clock, "c0")
    http.settle()
    assert status_of(http.server.store, BUNDLE, "app")["summary"]["offline"] == 2
    http.patch_bundle({"spec": {"helm": {"values": {"v": 2}}}})
    assert http.values(names) == expected


def test_mass_deletion_is_held_until_allowed_for_its_generation(http: Http) -> None:
    http.start(*(cluster(n, {"env": "prod"}) for n in FLEET), bundle(PROD))
    http.patch_bundle({"spec": {"targets": TYPO}})
    assert http.deployed() == set(FLEET)
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "DeletionHeld")
    assert "would delete 8 of the bundle's 8 BundleDeployments" in ready["message"]
    generation = http.generation()
    http.patch_bundle({"metadata": {"annotations": {"bundler.dev/allow-deletion": "1"}}})
    assert http.deployed() == set(FLEET)
    allow = {"bundler.dev/allow-deletion": str(generation)}
    http.patch_bundle({"metadata": {"annotations": allow}})
    assert http.deployed() == set()


def test_reverting_a_held_deletion_releases_the_hold(http: Http) -> None:
    http.start(*(cluster(n, {"env": "prod"}) for n in FLEET), bundle(PROD))
    http.patch_bundle({"spec": {"targets": TYPO}})
    assert http.ready()["reason"] == "DeletionHeld"
    http.patch_bundle({"spec": {"targets": PROD}})
    assert http.deployed() == set(FLEET)
    assert http.ready()["reason"] != "DeletionHeld"


# (clusters relabelled away from env=prod, the deletion guard, clusters left deployed)
DELETION_CASES: list[tuple[str, int, dict[str, Any] | None, int]] = [
    ("a-few-deletions-proceed", 3, None, 5),
    ("more-than-half-and-more-than-five-are-held", 6, None, 8),
    ("disabled-guard-deletes", 6, {"enabled": False}, 2),
    ("stricter-guard-holds-fewer", 2, {"maxDeletions": 1, "maxDeletionsPercent": 10}, 8),
]


@pytest.mark.parametrize(
    ("untargeted", "guard", "left"),
    [c[1:] for c in DELETION_CASES],
    ids=[c[0] for c in DELETION_CASES],
)
def test_deletion_guard_thresholds(
    http: Http, untargeted: int, guard: dict[str, Any] | None, left: int
) -> None:
    strategy = {} if guard is None else {"deletionGuard": guard}
    clusters = [
        cluster(n, {"env": "dev" if i < untargeted else "prod"}) for i, n in enumerate(FLEET)
    ]
    http.start(*clusters, bundle(ALL, rolloutStrategy=strategy))
    http.patch_bundle({"spec": {"targets": PROD}})
    assert len(http.deployed()) == left


def test_deleting_the_bundle_is_not_guarded(http: Http) -> None:
    http.start(*(cluster(n, {"env": "prod"}) for n in FLEET), bundle(PROD))
    http.admin.delete(BUNDLE, "app", WS)
    http.settle()
    assert http.deployed() == set()


FOUR = FLEET[:4]


def start_failing_rollout(http: Http, on_failure: dict[str, Any]) -> None:
    """Four clusters Ready on the first options; then v=2 rolls out two at a time."""
    strategy = {"maxUnavailable": 2, "onFailure": on_failure}
    # Never offline: an offline cluster is not failed by the progress deadline.
    clusters = [cluster(n) for n in FOUR]
    http.start(*clusters, bundle(ALL, rolloutStrategy=strategy), offline_after=3600.0)
    for name in FOUR:
        report(http.admin, name)
    http.settle()
    http.patch_bundle({"spec": {"helm": {"values": {"v": 2}}}})
    assert http.values(FOUR) == [{"v": 2}, {"v": 2}, None, None]


def test_failing_rollout_halts_and_resumes_on_annotation(http: Http) -> None:
    start_failing_rollout(http, {"maxFailures": 1, "action": "Halt"})
    for name in ("c0", "c1"):
        report(http.admin, name, applied=False, deployed_error="image pull failed")
    http.settle()
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "RolloutHalted")
    assert "2 clusters failed the rollout, maxFailures is 1" in ready["message"]
    assert f"{WS}/c0: ApplyFailed: image pull failed" in ready["message"]
    # Halted: the failed clusters keep the failing deployment, nothing more is promoted.
    assert http.values(FOUR) == [{"v": 2}, {"v": 2}, None, None]
    for name in ("c0", "c1"):
        report(http.admin, name)
    resume = {"bundler.dev/resume-rollout": str(http.generation())}
    http.patch_bundle({"metadata": {"annotations": resume}})
    assert http.values(FOUR) == [{"v": 2}] * 4


def test_failing_rollout_rolls_back_to_the_last_ready_options(http: Http) -> None:
    start_failing_rollout(http, {"maxFailures": 1, "action": "Rollback"})
    before = deployment_of(http.server.store, "c2")["spec"]
    for name in ("c0", "c1"):
        report(http.admin, name, applied=False, deployed_error="image pull failed")
    http.settle()
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "RolledBack")
    for name in ("c0", "c1"):
        spec = deployment_of(http.server.store, name)["spec"]
        assert (spec["options"], spec["deploymentID"]) == (
            before["options"],
            before["deploymentID"],
        )
        assert spec["stagedOptions"]["helm"]["values"] == {"v": 2}
        assert spec["rolledBackFrom"] == spec["stagedDeploymentID"]
        report(http.admin, name)
    http.settle()
    # Back on the last Ready options, the rollout stays halted until a new generation.
    assert http.ready()["reason"] == "RolledBack"
    assert http.values(FOUR) == [None] * 4
    http.patch_bundle({"spec": {"helm": {"values": {"v": 3}}}})
    assert http.values(FOUR) == [{"v": 3}] * 2 + [None] * 2


def test_not_ready_past_the_progress_deadline_halts(http: Http, clock: ManualClock) -> None:
    start_failing_rollout(http, {"progressDeadline": "10m"})
    report(http.admin, "c0", ready=False, ready_reason="Progressing")
    report(http.admin, "c1")
    http.settle()
    assert http.ready()["reason"] != "RolloutHalted"
    clock.advance(601.0)
    http.settle()
    ready = http.ready()
    assert (ready["status"], ready["reason"]) == ("False", "RolloutHalted")
    assert f"{WS}/c0: not Ready within progressDeadline: Progressing" in ready["message"]
    # c1 was Ready in time, so c2 took its place in the budget before the deadline passed.
    assert http.values(FOUR) == [{"v": 2}] * 3 + [None]
