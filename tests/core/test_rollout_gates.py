"""Rollout gates, pure: bake time, approvals and maintenance windows, with a fake clock (the
instant each pass is handed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bundler.api.bundle import Approval, PartitionState, RolloutStrategy
from bundler.core.approvals import Approved
from bundler.core.rollout import RolloutPlan, RolloutTarget, partition_members, plan_rollout
from bundler.core.rollout_failures import rollout_halt
from bundler.core.rollout_gates import (
    GateReason,
    Gates,
    PartitionRecord,
    WindowHold,
    bake_failures,
    first_gate,
    next_bake_end,
    records_of,
    rollout_status,
)
from tests.support.builders import cluster, deployment

NOW = datetime(2026, 3, 25, 12, 0, tzinfo=UTC)
BAKE = timedelta(minutes=10)
PARTITIONS = [
    {"name": "canary", "clusterName": "c0"},
    {"name": "rest", "clusterSelector": {}},
]
RUNS = {
    "ready-v1": deployment("v1", "v1"),
    "ready-v2": deployment("v2", "v2"),
    "broken-v2": deployment("v2", "v2", ready=False),
    "none": None,
}


def targets(*runs: str) -> list[RolloutTarget]:
    return [RolloutTarget(cluster(f"c{i}"), "v2", RUNS[r]) for i, r in enumerate(runs)]


def strategy(**extra: Any) -> RolloutStrategy:
    return RolloutStrategy.model_validate({"partitions": PARTITIONS, **extra})


def plan(runs: list[RolloutTarget], gates: Gates, **extra: Any) -> RolloutPlan:
    return plan_rollout(strategy(**extra), runs, [], bundle_paused=False, gates=gates)


def outcomes(result: RolloutPlan) -> list[str]:
    def word(d: Any) -> str:
        return "create" if d.create else "promote" if d.promote else "stage" if d.stage else "keep"

    return [word(d) for d in result.decisions]


def records(result: RolloutPlan, since: datetime | None = None) -> dict[str, PartitionRecord]:
    """What the Bundle's status keeps of `result`, readySince moved back to `since`."""
    kept = records_of(rollout_status(result.partitions))
    if since is None:
        return kept
    return {
        n: PartitionRecord(r.digest, since if r.ready_since else None, r.baked)
        for n, r in kept.items()
    }


# (id, what each cluster runs, readySince of canary recorded (minutes before now; None: no
#  record), decisions, canary's state, rest's state, the gate)
BAKES = [
    ("canary-first", ("ready-v1", "ready-v1", "ready-v1"), None,
     ["promote", "stage", "stage"], PartitionState.ROLLING_OUT, PartitionState.WAITING, None),
    ("canary-ready-bake-starts", ("ready-v2", "ready-v1", "ready-v1"), None,
     ["keep", "stage", "stage"], PartitionState.BAKING, PartitionState.WAITING, GateReason.BAKING),
    ("still-baking", ("ready-v2", "ready-v1", "ready-v1"), 5,
     ["keep", "stage", "stage"], PartitionState.BAKING, PartitionState.WAITING, GateReason.BAKING),
    ("baked-rest-promoted", ("ready-v2", "ready-v1", "ready-v1"), 10,
     ["keep", "promote", "promote"], PartitionState.READY, PartitionState.ROLLING_OUT, None),
    ("baked-but-broken-now", ("broken-v2", "ready-v1", "ready-v1"), 10,
     ["keep", "stage", "stage"], PartitionState.ROLLING_OUT, PartitionState.WAITING, None),
    ("nothing-new-nothing-waits", ("ready-v2", "ready-v2", "ready-v2"), None,
     ["keep", "keep", "keep"], PartitionState.BAKING, PartitionState.BAKING, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("runs", "since", "decided", "canary", "rest", "gate"),
    [c[1:] for c in BAKES],
    ids=[c[0] for c in BAKES],
)
def test_bake(
    runs: tuple[str, ...],
    since: int | None,
    decided: list[str],
    canary: PartitionState,
    rest: PartitionState,
    gate: GateReason | None,
) -> None:
    fleet = targets(*runs)
    previous = {}
    if since is not None:
        # What an earlier pass recorded when it first saw canary Ready on v2.
        first = plan(targets("ready-v2", *runs[1:]), Gates(NOW, bake=BAKE))
        previous = records(first, NOW - timedelta(minutes=since))
    result = plan(fleet, Gates(NOW, bake=BAKE, previous=previous), bakeTime="10m")
    assert outcomes(result) == decided
    assert [p.state for p in result.partitions] == [canary, rest]
    found = first_gate(result.partitions)
    assert (found.reason if found else None) is gate
    if gate is GateReason.BAKING:
        assert found is not None and found.display == "Baking(canary)"


def test_the_bake_runs_from_when_the_partition_was_first_seen_ready() -> None:
    fleet = targets("ready-v2", "ready-v1", "ready-v1")
    first = plan(fleet, Gates(NOW, bake=BAKE))
    canary = first.partitions[0]
    assert canary.ready_since == NOW and canary.bake_ends == NOW + BAKE
    assert next_bake_end(first.partitions, NOW) == NOW + BAKE
    later = NOW + timedelta(minutes=4)
    again = plan(fleet, Gates(later, bake=BAKE, previous=records(first)))
    assert again.partitions[0].ready_since == NOW
    assert outcomes(again) == ["keep", "stage", "stage"]
    done = plan(fleet, Gates(NOW + BAKE, bake=BAKE, previous=records(again)))
    assert done.partitions[0].baked
    assert outcomes(done) == ["keep", "promote", "promote"]


def test_new_deployments_start_a_new_bake() -> None:
    first = plan(targets("ready-v2", "ready-v2", "ready-v2"), Gates(NOW, bake=BAKE))
    baked = plan(
        targets("ready-v2", "ready-v2", "ready-v2"),
        Gates(NOW + BAKE, bake=BAKE, previous=records(first)),
    )
    assert all(p.baked for p in baked.partitions)
    # v3 wanted: canary's digest changes, its record no longer holds.
    fleet = [RolloutTarget(t.cluster, "v3", t.current) for t in targets("ready-v2", "ready-v2")]
    after = plan(fleet, Gates(NOW + 2 * BAKE, bake=BAKE, previous=records(baked)))
    assert [p.state for p in after.partitions] == [
        PartitionState.ROLLING_OUT,
        PartitionState.WAITING,
    ]
    assert after.partitions[0].ready_since is None


# (id, approval, approved, what each cluster runs, decisions, the gate's partition)
APPROVALS = [
    ("rest-waits", {"partitions": ["rest"]}, Approved(), ("ready-v2", "ready-v1"),
     ["keep", "stage"], "rest"),
    ("rest-approved", {"partitions": ["rest"]}, Approved(partitions=frozenset({"rest"})),
     ("ready-v2", "ready-v1"), ["keep", "promote"], None),
    ("every-partition-waits", {}, Approved(), ("ready-v1", "ready-v1"), ["stage", "stage"],
     "canary"),
    ("all-approved", {}, Approved(every=True), ("ready-v1", "ready-v1"),
     ["promote", "promote"], None),
    ("creations-wait-too", {}, Approved(), ("none", "none"), ["keep", "keep"], "canary"),
    ("nothing-new-nothing-to-approve", {}, Approved(), ("ready-v2", "ready-v2"),
     ["keep", "keep"], None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("approval", "given", "runs", "decided", "waiting"),
    [c[1:] for c in APPROVALS],
    ids=[c[0] for c in APPROVALS],
)
def test_approval(
    approval: dict[str, Any],
    given: Approved,
    runs: tuple[str, ...],
    decided: list[str],
    waiting: str | None,
) -> None:
    gates = Gates(
        NOW,
        bundle="fleet-default/app",
        generation=7,
        approval=Approval.model_validate(approval),
        approvals=given,
        manual=frozenset({"canary", "rest"}),
    )
    result = plan(targets(*runs), gates, approval=approval)
    assert outcomes(result) == decided
    found = first_gate(result.partitions)
    if waiting is None:
        assert found is None
        return
    assert found is not None and found.reason is GateReason.WAITING_FOR_APPROVAL
    assert found.display == f"WaitingForApproval({waiting})"
    assert f"bundler rollout approve fleet-default/app --partition {waiting}" in found.message
    assert "generation 7" in found.message


def test_windows_hold_single_clusters() -> None:
    closed = {
        "fleet-default/c1": WindowHold("outside its maintenance window until 02:00Z", None),
        "fleet-default/c2": WindowHold("outside its maintenance window until 02:00Z", None),
    }
    fleet = [*targets("ready-v1", "ready-v1", "ready-v1"), RolloutTarget(cluster("c3"), "v2", None)]
    result = plan_rollout(
        RolloutStrategy(), fleet, [], bundle_paused=False, gates=Gates(NOW, closed=closed)
    )
    assert outcomes(result) == ["promote", "stage", "stage", "create"]
    assert result.decisions[1].reason == "staged: outside its maintenance window until 02:00Z"
    (partition,) = result.partitions
    assert partition.window_held == ("fleet-default/c1", "fleet-default/c2")
    gate = first_gate(result.partitions)
    assert gate is not None and gate.display == "OutsideWindow(2 clusters)"
    # A cluster whose deployment is what it wants is left alone whatever its window says.
    up_to_date = plan_rollout(
        RolloutStrategy(), targets("ready-v2", "ready-v2"), [], bundle_paused=False,
        gates=Gates(NOW, closed=closed),
    )  # fmt: skip
    assert first_gate(up_to_date.partitions) is None


def test_a_cluster_not_ready_during_the_bake_fails_the_rollout() -> None:
    ready = targets("ready-v2", "ready-v1")
    first = plan(ready, Gates(NOW, bake=BAKE))
    previous = records(first)
    broken = targets("broken-v2", "ready-v1")
    rollout = strategy(bakeTime="10m", onFailure={})
    members = partition_members(rollout, broken, [])
    failed = bake_failures(members, previous)
    assert failed == {"fleet-default/c0"}
    halt = rollout_halt(
        rollout, broken, now=NOW, progress_deadline=None, resumed=False, bake_failed=failed
    )
    assert halt is not None
    assert halt.failures[0].reason.startswith("not Ready during its partition's bake")
    # Once baked, a cluster that is not Ready is not a bake failure.
    baked = {n: PartitionRecord(r.digest, r.ready_since, True) for n, r in previous.items()}
    assert bake_failures(members, baked) == frozenset()
