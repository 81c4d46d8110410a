"""Which transitions become Events, what they say, and how many are written."""

from __future__ import annotations

import pytest

from bundler.api.meta import Condition, ConditionStatus
from bundler.core.events import (
    EventBudget,
    EventSpec,
    EventType,
    Reason,
    bundle_events,
    cluster_events,
    event_object,
)


def ready(status: str, reason: str, message: str = "why") -> Condition:
    return Condition(type="Ready", status=ConditionStatus(status), reason=reason, message=message)


def phase(type: str, status: str, reason: str = "R", message: str = "done") -> Condition:
    return Condition(type=type, status=ConditionStatus(status), reason=reason, message=message)


W, N = EventType.WARNING, EventType.NORMAL

# (before, after, observed generation, generation, (type, reason) of each Event)
BUNDLE_CASES: list[
    tuple[str, list[Condition], list[Condition], int | None, int, list[tuple[EventType, Reason]]]
] = [
    ("first-plan", [], [ready("False", "Pending")], None, 1, [(N, Reason.ROLLOUT_STARTED)]),
    ("nothing-new", [ready("True", "Ready")], [ready("True", "Ready")], 3, 3, []),
    (
        "new-generation",
        [ready("True", "Ready")],
        [ready("False", "OutOfSync")],
        3,
        4,
        [(N, Reason.ROLLOUT_STARTED)],
    ),
    (
        "halted",
        [ready("False", "NotReady")],
        [ready("False", "RolloutHalted")],
        4,
        4,
        [(W, Reason.ROLLOUT_HALTED)],
    ),
    (
        "still-halted",
        [ready("False", "RolloutHalted")],
        [ready("False", "RolloutHalted")],
        4,
        4,
        [],
    ),
    (
        "rolled-back",
        [ready("False", "RolloutHalted")],
        [ready("False", "RolledBack")],
        4,
        4,
        [(W, Reason.ROLLED_BACK)],
    ),
    (
        "deletion-held",
        [ready("True", "Ready")],
        [ready("False", "DeletionHeld")],
        4,
        5,
        [(N, Reason.ROLLOUT_STARTED), (W, Reason.DELETION_HELD)],
    ),
    (
        "an-unresolved-version-starts-no-rollout",
        [ready("True", "Ready")],
        [ready("False", "VersionNotResolved")],
        4,
        5,
        [],
    ),
    (
        "waiting-for-approval",
        [ready("False", "OutOfSync")],
        [ready("False", "WaitingForApproval"), phase("RolloutGated", "True", "WaitingForApproval")],
        4,
        4,
        [(N, Reason.WAITING_FOR_APPROVAL)],
    ),
    (
        "still-waiting-for-approval",
        [phase("RolloutGated", "True", "WaitingForApproval")],
        [phase("RolloutGated", "True", "WaitingForApproval")],
        4,
        4,
        [],
    ),
    (
        "baking-is-no-event",
        [],
        [phase("RolloutGated", "True", "Baking")],
        4,
        4,
        [],
    ),
    (
        "a-rejected-spec-starts-no-rollout",
        [ready("True", "Ready")],
        [ready("False", "InvalidSpec")],
        4,
        5,
        [(W, Reason.INVALID_SPEC)],
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "observed", "generation", "expected"),
    [c[1:] for c in BUNDLE_CASES],
    ids=[c[0] for c in BUNDLE_CASES],
)
def test_bundle_events(
    before: list[Condition],
    after: list[Condition],
    observed: int | None,
    generation: int,
    expected: list[tuple[EventType, Reason]],
) -> None:
    events = bundle_events(
        before, after, observed_generation=observed, generation=generation, targeted=3
    )
    assert [(e.type, e.reason) for e in events] == expected


CLUSTER_CASES: list[
    tuple[str, list[Condition], list[Condition], list[tuple[EventType, Reason]]]
] = [
    ("first-status-says-nothing", [], [ready("False", "Offline")], []),
    (
        "goes-offline",
        [ready("True", "Ready")],
        [ready("False", "Offline")],
        [(W, Reason.CLUSTER_OFFLINE)],
    ),
    ("stays-offline", [ready("False", "Offline")], [ready("False", "Offline")], []),
    (
        "comes-back",
        [ready("False", "Offline")],
        [ready("True", "Ready")],
        [(N, Reason.CLUSTER_ONLINE)],
    ),
    (
        "bootstrap-phases",
        [phase("FluxInstalled", "False"), phase("AgentConnected", "False")],
        [phase("FluxInstalled", "True"), phase("AgentConnected", "True")],
        [(N, Reason.FLUX_INSTALLED), (N, Reason.AGENT_CONNECTED)],
    ),
    ("phase-already-true", [phase("Bootstrapped", "True")], [phase("Bootstrapped", "True")], []),
    (
        "bootstrap-removed",
        [phase("Bootstrapped", "True")],
        [phase("Bootstrapped", "False", "BootstrapRemoved", "left as it runs")],
        [(W, Reason.BOOTSTRAP_REMOVED)],
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [c[1:] for c in CLUSTER_CASES],
    ids=[c[0] for c in CLUSTER_CASES],
)
def test_cluster_events(
    before: list[Condition], after: list[Condition], expected: list[tuple[EventType, Reason]]
) -> None:
    assert [(e.type, e.reason) for e in cluster_events(before, after)] == expected


def test_an_event_is_a_core_v1_event_on_its_object() -> None:
    bundle = {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "web", "namespace": "ws", "uid": "u-1", "resourceVersion": "7"},
    }
    spec = EventSpec(W, Reason.ROLLOUT_HALTED, "x" * 5000)
    event = event_object(bundle, spec, "2026-01-01T00:00:00Z", "manager-0")
    assert event["involvedObject"] == {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "name": "web",
        "namespace": "ws",
        "uid": "u-1",
        "resourceVersion": "7",
    }
    assert (event["type"], event["reason"], event["metadata"]["namespace"]) == (
        "Warning",
        "RolloutHalted",
        "ws",
    )
    assert event["metadata"]["name"].startswith("web.")
    assert len(event["message"].encode()) <= 1024
    assert event["source"] == {"component": "bundler-manager"}


def test_the_budget_bounds_duplicates_each_object_and_the_whole_manager() -> None:
    budget = EventBudget(
        per_object_burst=3, per_object_refill_s=10, global_burst=5, global_per_second=1
    )
    same = EventSpec(N, Reason.CLUSTER_ONLINE, "back")
    assert budget.admit("a", same, 0.0)
    assert not budget.admit("a", same, 1.0)  # the same Event again: a duplicate
    assert budget.admit("a", same, 601.0)  # after the duplicate window
    told = [budget.admit("b", EventSpec(N, Reason.CLUSTER_ONLINE, str(i)), 700.0) for i in range(5)]
    assert told == [True, True, True, False, False]  # b's burst is 3
    assert budget.admit("b", EventSpec(N, Reason.CLUSTER_ONLINE, "later"), 711.0)  # refilled
    others = [budget.admit(f"o{i}", same, 711.0) for i in range(6)]
    assert others.count(True) < 6  # the manager's own bucket
    assert budget.dropped > 0
