from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.meta import CONDITION_MESSAGE_MAX, CONDITIONS_MAX, Condition, ConditionStatus
from bundler.api.summary import DeploymentState as S
from bundler.core.bounds import TRUNCATED_MARKER
from bundler.core.state import (
    UNKNOWN_REASON,
    condition,
    conditions_equal_ignoring_time,
    deployment_state,
    is_offline,
    state_message,
)
from tests.support.builders import APPLY_FAILED, UPGRADE_FAILED, deployment

# Each case is the first state in evaluation order whose rule holds; later rules also hold where
# it matters (e.g. "offline-wins-over-err-applied"), so the order itself is under test.
STATE_CASES: list[tuple[str, BundleDeployment | None, bool, S]] = [
    ("no-bundledeployment-is-pending", None, False, S.PENDING),
    ("pending-even-when-offline", None, True, S.PENDING),
    ("offline-wins-over-ready", deployment(), True, S.OFFLINE),
    (
        "offline-wins-over-err-applied",
        deployment(applied="v1", conditions=[APPLY_FAILED]),
        True,
        S.OFFLINE,
    ),
    (
        "deployed-false-and-old-id-is-err-applied",
        deployment(applied="v1", conditions=[APPLY_FAILED]),
        False,
        S.ERR_APPLIED,
    ),
    (
        "failure-for-current-generation-is-err-applied",
        deployment(
            applied="v1", generation=3, conditions=[{**APPLY_FAILED, "observedGeneration": 3}]
        ),
        False,
        S.ERR_APPLIED,
    ),
    (
        "failure-for-older-generation-is-stale",
        deployment(
            applied="v1", generation=4, conditions=[{**APPLY_FAILED, "observedGeneration": 3}]
        ),
        False,
        S.WAIT_APPLIED,
    ),
    ("old-id-without-failure-is-wait-applied", deployment(applied="v1"), False, S.WAIT_APPLIED),
    (
        "deployed-true-old-id-is-wait-applied",
        deployment(applied="v1", conditions=[{**APPLY_FAILED, "status": "True"}]),
        False,
        S.WAIT_APPLIED,
    ),
    ("no-status-is-wait-applied", deployment(status=False), False, S.WAIT_APPLIED),
    (
        "stale-apply-failure-after-success-is-ignored",
        deployment(ready=True, conditions=[APPLY_FAILED]),
        False,
        S.READY,
    ),
    ("applied-not-ready", deployment(ready=False, conditions=[UPGRADE_FAILED]), False, S.NOT_READY),
    ("not-ready-wins-over-out-of-sync", deployment(ready=False, staged="v3"), False, S.NOT_READY),
    ("staged-differs-is-out-of-sync", deployment(staged="v3"), False, S.OUT_OF_SYNC),
    (
        "out-of-sync-wins-over-modified",
        deployment(staged="v3", non_modified=False),
        False,
        S.OUT_OF_SYNC,
    ),
    ("staged-equal-to-current-is-in-sync", deployment(staged="v2"), False, S.READY),
    ("modified", deployment(non_modified=False), False, S.MODIFIED),
    ("ready", deployment(), False, S.READY),
]


@pytest.mark.parametrize(
    ("bd", "offline", "expected"),
    [case[1:] for case in STATE_CASES],
    ids=[case[0] for case in STATE_CASES],
)
def test_deployment_state(bd: BundleDeployment | None, offline: bool, expected: S) -> None:
    assert deployment_state(bd, offline=offline) is expected


MESSAGE_CASES: list[tuple[str, BundleDeployment | None, str]] = [
    ("pending-has-none", None, ""),
    (
        "err-applied-uses-deployed",
        deployment(applied="v1", conditions=[APPLY_FAILED, UPGRADE_FAILED]),
        "ApplyFailed: namespace podinfo is forbidden",
    ),
    (
        "not-ready-uses-ready",
        deployment(ready=False, conditions=[APPLY_FAILED, UPGRADE_FAILED]),
        "UpgradeFailed: Helm upgrade failed: timed out",
    ),
    (
        "reason-only",
        deployment(
            ready=False, conditions=[{"type": "Ready", "status": "False", "reason": "Progressing"}]
        ),
        "Progressing",
    ),
    (
        "message-only",
        deployment(
            ready=False,
            conditions=[{"type": "Ready", "status": "Unknown", "message": "reconciling"}],
        ),
        "reconciling",
    ),
    ("not-ready-without-condition", deployment(ready=False), ""),
    (
        "ready-condition-true-says-nothing",
        deployment(
            ready=False, conditions=[{"type": "Ready", "status": "True", "reason": "Installed"}]
        ),
        "",
    ),
    (
        "wait-applied-ignores-stale-failure",
        deployment(
            applied="v1", generation=2, conditions=[{**APPLY_FAILED, "observedGeneration": 1}]
        ),
        "",
    ),
    ("ready-has-none", deployment(conditions=[{**UPGRADE_FAILED, "status": "True"}]), ""),
]


@pytest.mark.parametrize(
    ("bd", "expected"), [c[1:] for c in MESSAGE_CASES], ids=[c[0] for c in MESSAGE_CASES]
)
def test_state_message(bd: BundleDeployment | None, expected: str) -> None:
    assert state_message(bd) == expected


NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
THRESHOLD = timedelta(minutes=15)

OFFLINE_CASES: list[tuple[str, str | None, bool]] = [
    ("never-seen", None, True),
    ("just-seen", "2024-05-01T11:59:00Z", False),
    ("exactly-at-threshold", "2024-05-01T11:45:00Z", False),
    ("past-threshold", "2024-05-01T11:44:59Z", True),
    ("other-zone-same-instant", "2024-05-01T13:50:00+02:00", False),
    ("naive-is-utc", "2024-05-01T11:50:00", False),
    ("in-the-future-is-online", "2024-05-01T12:05:00Z", False),
    ("garbage", "yesterday", True),
]


@pytest.mark.parametrize(
    ("last_seen", "expected"), [c[1:] for c in OFFLINE_CASES], ids=[c[0] for c in OFFLINE_CASES]
)
def test_is_offline(last_seen: str | None, expected: bool) -> None:
    assert is_offline(last_seen, NOW, THRESHOLD) is expected


T0, T1 = "2024-05-01T10:00:00Z", "2024-05-01T11:00:00Z"
OTHER = Condition(type="Imported", status=ConditionStatus.TRUE, lastTransitionTime=T0)


def ready(status: ConditionStatus, reason: str, at: str | None = T0) -> Condition:
    return Condition(type="Ready", status=status, reason=reason, lastTransitionTime=at)


TRANSITION_CASES: list[tuple[str, list[Condition], ConditionStatus | bool, list[Condition]]] = [
    ("added-at-now", [OTHER], True, [OTHER, ready(ConditionStatus.TRUE, "Done", T1)]),
    (
        "same-status-keeps-time",
        [ready(ConditionStatus.TRUE, "Old"), OTHER],
        ConditionStatus.TRUE,
        [ready(ConditionStatus.TRUE, "Done"), OTHER],
    ),
    (
        "changed-status-takes-now",
        [OTHER, ready(ConditionStatus.FALSE, "Old")],
        True,
        [OTHER, ready(ConditionStatus.TRUE, "Done", T1)],
    ),
    (
        "same-status-without-time-takes-now",
        [ready(ConditionStatus.TRUE, "Old", None)],
        True,
        [ready(ConditionStatus.TRUE, "Done", T1)],
    ),
]


@pytest.mark.parametrize(
    ("previous", "status", "expected"),
    [c[1:] for c in TRANSITION_CASES],
    ids=[c[0] for c in TRANSITION_CASES],
)
def test_condition_transition_time(
    previous: list[Condition], status: ConditionStatus | bool, expected: list[Condition]
) -> None:
    assert condition("Ready", status, "Done", "", T1, previous) == expected


def test_condition_records_observed_generation() -> None:
    [set_] = condition("Deployed", False, "ApplyFailed", "boom", T1, [], observed_generation=7)
    assert (set_.status, set_.observedGeneration) == (ConditionStatus.FALSE, 7)


EQUALITY_CASES: list[tuple[str, list[Condition], list[Condition], bool]] = [
    (
        "only-time-differs",
        [ready(ConditionStatus.TRUE, "R", T0)],
        [ready(ConditionStatus.TRUE, "R", T1)],
        True,
    ),
    (
        "order-differs",
        [OTHER, ready(ConditionStatus.TRUE, "R")],
        [ready(ConditionStatus.TRUE, "R"), OTHER],
        True,
    ),
    (
        "reason-differs",
        [ready(ConditionStatus.TRUE, "R")],
        [ready(ConditionStatus.TRUE, "X")],
        False,
    ),
    (
        "status-differs",
        [ready(ConditionStatus.TRUE, "R")],
        [ready(ConditionStatus.FALSE, "R")],
        False,
    ),
    ("one-missing", [OTHER, ready(ConditionStatus.TRUE, "R")], [OTHER], False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), [c[1:] for c in EQUALITY_CASES], ids=[c[0] for c in EQUALITY_CASES]
)
def test_conditions_equal_ignoring_time(
    a: list[Condition], b: list[Condition], expected: bool
) -> None:
    assert conditions_equal_ignoring_time(a, b) is expected


def test_condition_message_written_by_others_is_truncated() -> None:
    [set_] = condition("Ready", False, "UpgradeFailed", "x" * 2 * 1024 * 1024, T1, [])
    assert len(set_.message.encode()) <= CONDITION_MESSAGE_MAX
    assert set_.message.endswith(TRUNCATED_MARKER)


def test_conditions_carried_over_get_their_messages_truncated() -> None:
    huge = Condition(
        type="Agent", status=ConditionStatus.FALSE, reason="R", message="x" * 2 * 1024 * 1024
    )
    carried, _ = condition("Ready", True, "Done", "", T1, [huge])
    assert len(carried.message.encode()) <= CONDITION_MESSAGE_MAX
    assert carried.message.endswith(TRUNCATED_MARKER)


def test_conditions_stay_within_their_bound_and_keep_the_one_set() -> None:
    others = [
        Condition(type=f"Other{i}", status=ConditionStatus.TRUE, reason="R")
        for i in range(CONDITIONS_MAX + 5)
    ]
    conditions = condition("Ready", True, "Done", "", T1, others)
    assert len(conditions) == CONDITIONS_MAX
    assert conditions[-1].type == "Ready"
    assert conditions[:-1] == others[: CONDITIONS_MAX - 1]


@pytest.mark.parametrize(
    ("reason", "written"),
    [
        ("UpgradeFailed", "UpgradeFailed"),
        ("Install_Failed:retry", "Install_Failed:retry"),
        ("", UNKNOWN_REASON),
        ("upgrade failed", UNKNOWN_REASON),
        ("Failed.", UNKNOWN_REASON),
        ("R" * 1025, UNKNOWN_REASON),
    ],
    ids=["flux-reason", "colon-and-underscore", "missing", "spaces", "trailing-dot", "too-long"],
)
def test_condition_reason_is_one_kubernetes_accepts(reason: str, written: str) -> None:
    [set_] = condition("Ready", False, reason, "", T1, [])
    assert set_.reason == written
