from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bundler.api.bundle import FailureAction, RolloutStrategy
from bundler.api.bundledeployment import BundleDeployment, LastReady
from bundler.core.rollout import RolloutTarget, plan_rollout
from bundler.core.rollout_failures import Halt, rollout_halt, seconds_to_deadline
from tests.support.builders import cluster, deployment

NEW = "v2"
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DEADLINE = timedelta(minutes=10)
EARLY = (NOW - timedelta(minutes=5)).isoformat()
LATE = (NOW - timedelta(minutes=11)).isoformat()
APPLY_FAILED = [
    {"type": "Deployed", "status": "False", "reason": "ApplyFailed", "message": "boom"},
]


def with_spec(bd: BundleDeployment, **update: Any) -> BundleDeployment:
    return bd.model_copy(update={"spec": bd.spec.model_copy(update=update)})


def last_ready(bd: BundleDeployment) -> BundleDeployment:
    return with_spec(bd, lastReady=LastReady(options=bd.spec.options, deploymentID="v1"))


HEALTH_FAILED = {"type": "Ready", "status": "False", "reason": "HealthCheckFailed",
                 "message": "Deployment apps/web: ProgressDeadlineExceeded"}  # fmt: skip
HEALTH_PENDING = {"type": "Ready", "status": "False", "reason": "HealthCheckPending"}

# What a cluster runs, by short name.
RUNS: dict[str, BundleDeployment | None] = {
    "none": None,
    "ready-v1": deployment("v1", "v1"),
    "ready-v2": with_spec(deployment("v2", "v2"), promotedAt=LATE),
    "err-v2": last_ready(deployment("v2", "v1", conditions=APPLY_FAILED)),
    "err-v2-no-last-ready": deployment("v2", "v1", conditions=APPLY_FAILED),
    "slow-v2-early": last_ready(with_spec(deployment("v2", "v2", ready=False), promotedAt=EARLY)),
    "slow-v2-late": last_ready(with_spec(deployment("v2", "v2", ready=False), promotedAt=LATE)),
    "rolled-back-from-v2": with_spec(deployment("v1", "v1", staged="v2"), rolledBackFrom="v2"),
    "rolled-back-from-v0": with_spec(deployment("v1", "v1"), rolledBackFrom="v0"),
    "err-v1-old-rollout": deployment("v1", "v0", conditions=APPLY_FAILED),
    "unhealthy-v2": deployment("v2", "v2", ready=False, conditions=[HEALTH_FAILED]),
    "health-pending-v2": deployment("v2", "v2", ready=False, conditions=[HEALTH_PENDING]),
}


def targets(runs: list[str], offline: frozenset[int] = frozenset()) -> list[RolloutTarget]:
    return [
        RolloutTarget(cluster(f"c{i}"), NEW, RUNS[r], offline=i in offline)
        for i, r in enumerate(runs)
    ]


def halt_of(
    runs: list[str],
    on_failure: dict[str, Any] | None,
    *,
    offline: frozenset[int] = frozenset(),
    block_offline: bool = False,
    resumed: bool = False,
) -> Halt | None:
    strategy: dict[str, Any] = {}
    if on_failure is not None:
        strategy["onFailure"] = on_failure
    if block_offline:
        strategy["offlineClusters"] = "Block"
    return rollout_halt(
        RolloutStrategy.model_validate(strategy),
        targets(runs, offline),
        now=NOW,
        progress_deadline=DEADLINE,
        resumed=resumed,
    )


# (what each cluster runs, onFailure, the failed clusters if halted else None)
HALT_CASES: list[tuple[str, list[str], dict[str, Any] | None, list[str] | None]] = [
    ("no-on-failure-never-halts", ["err-v2"] * 3, None, None),
    ("default-first-failure-halts", ["err-v2", "ready-v1"], {}, ["c0"]),
    ("at-max-failures-goes-on", ["err-v2", "ready-v1"], {"maxFailures": 1}, None),
    ("over-max-failures-halts", ["err-v2", "err-v2", "ready-v1"], {"maxFailures": 1}, ["c0", "c1"]),
    ("percent-of-targets", ["err-v2", "err-v2"] + ["ready-v1"] * 8, {"maxFailures": "20%"}, None),
    (
        "over-percent-of-targets",
        ["err-v2"] * 3 + ["ready-v1"] * 7,
        {"maxFailures": "20%"},
        ["c0", "c1", "c2"],
    ),
    ("not-ready-before-deadline-is-no-failure", ["slow-v2-early"], {}, None),
    ("not-ready-past-deadline-fails", ["slow-v2-late"], {}, ["c0"]),
    ("ready-on-new-is-no-failure", ["ready-v2"], {}, None),
    ("rolled-back-from-this-rollout-still-counts", ["rolled-back-from-v2"], {}, ["c0"]),
    ("rolled-back-from-an-earlier-rollout-does-not", ["rolled-back-from-v0"], {}, None),
    ("failure-on-an-older-deployment-does-not-count", ["err-v1-old-rollout"], {}, None),
    ("nothing-created-yet", ["none"], {}, None),
    ("a-failed-health-check-fails-at-once", ["unhealthy-v2"], {}, ["c0"]),
    ("a-pending-health-check-does-not", ["health-pending-v2"], {}, None),
]


@pytest.mark.parametrize(
    ("runs", "on_failure", "failed"),
    [c[1:] for c in HALT_CASES],
    ids=[c[0] for c in HALT_CASES],
)
def test_rollout_halts_once_failures_exceed_max_failures(
    runs: list[str], on_failure: dict[str, Any] | None, failed: list[str] | None
) -> None:
    halt = halt_of(runs, on_failure)
    found = None if halt is None else [f.cluster.split("/")[1] for f in halt.failures]
    assert found == failed


# (offline, offlineClusters Block, halted)
OFFLINE_CASES = [
    ("offline-is-not-failed-by-the-deadline", True, False, False),
    ("offline-with-block-is-failed-by-the-deadline", True, True, True),
    ("online-is-failed-by-the-deadline", False, False, True),
]


@pytest.mark.parametrize(
    ("offline", "block", "halted"),
    [c[1:] for c in OFFLINE_CASES],
    ids=[c[0] for c in OFFLINE_CASES],
)
def test_offline_cluster_and_the_deadline(offline: bool, block: bool, halted: bool) -> None:
    halt = halt_of(
        ["slow-v2-late"], {}, offline=frozenset({0} if offline else ()), block_offline=block
    )
    assert (halt is not None) == halted


def test_errapplied_fails_even_offline() -> None:
    assert halt_of(["err-v2"], {}, offline=frozenset({0})) is not None


def test_resume_lifts_the_halt() -> None:
    assert halt_of(["err-v2"], {}, resumed=True) is None


# (what each cluster runs, the clusters rolled back)
ROLLBACK_CASES: list[tuple[str, list[str], list[str]]] = [
    ("failed-with-last-ready-rolls-back", ["err-v2", "slow-v2-late"], ["c0", "c1"]),
    ("failed-without-last-ready-keeps-what-it-runs", ["err-v2-no-last-ready", "err-v2"], ["c1"]),
    ("already-rolled-back-is-not-again", ["rolled-back-from-v2", "err-v2"], ["c1"]),
    ("healthy-clusters-are-not-rolled-back", ["err-v2", "ready-v2", "ready-v1"], ["c0"]),
]


@pytest.mark.parametrize(
    ("runs", "rolled_back"),
    [c[1:] for c in ROLLBACK_CASES],
    ids=[c[0] for c in ROLLBACK_CASES],
)
def test_rollback_targets(runs: list[str], rolled_back: list[str]) -> None:
    halt = halt_of(runs, {"action": "Rollback"})
    assert halt is not None
    assert halt.action is FailureAction.ROLLBACK
    assert sorted(k.split("/")[1] for k in halt.rollback) == rolled_back


def test_halt_rolls_nothing_back() -> None:
    halt = halt_of(["err-v2"], {"action": "Halt"})
    assert halt is not None and halt.rollback == frozenset()


def test_halted_rollout_promotes_and_creates_nothing_and_rolls_back() -> None:
    found = targets(["err-v2", "ready-v1", "none", "ready-v2"])
    halt = rollout_halt(
        RolloutStrategy.model_validate({"onFailure": {"action": "Rollback"}}),
        found,
        now=NOW,
        progress_deadline=None,
        resumed=False,
    )
    assert halt is not None
    decisions = plan_rollout(
        None, found, [], bundle_paused=False, halted="rollout halted", rollback=halt.rollback
    ).decisions
    assert [(d.rollback, d.promote, d.stage, d.create) for d in decisions] == [
        (True, False, False, False),
        (False, False, True, False),
        (False, False, False, False),
        (False, False, False, False),
    ]
    assert decisions[1].reason == "staged: rollout halted"
    assert decisions[2].reason == "not created: rollout halted"


def test_halt_message_names_failed_clusters_and_reasons() -> None:
    halt = halt_of(["err-v2", "slow-v2-late"] * 4, {"maxFailures": 1})
    assert halt is not None
    assert halt.message() == (
        "8 clusters failed the rollout, maxFailures is 1: "
        "fleet-default/c0: ApplyFailed: boom; "
        "fleet-default/c1: not Ready within progressDeadline: not Ready; "
        "fleet-default/c2: ApplyFailed: boom; "
        "fleet-default/c3: not Ready within progressDeadline: not Ready; "
        "fleet-default/c4: ApplyFailed: boom; and 3 more"
    )


# (what each cluster runs, seconds until the next deadline)
DEADLINE_CASES: list[tuple[str, list[str], float | None]] = [
    ("none-waiting", ["ready-v1", "ready-v2"], None),
    ("one-waiting", ["slow-v2-early", "ready-v1"], 300.01),
    ("past-deadline-is-not-waited-for", ["slow-v2-late"], None),
]


@pytest.mark.parametrize(
    ("runs", "seconds"),
    [c[1:] for c in DEADLINE_CASES],
    ids=[c[0] for c in DEADLINE_CASES],
)
def test_seconds_to_deadline(runs: list[str], seconds: float | None) -> None:
    assert seconds_to_deadline(targets(runs), NOW, DEADLINE) == seconds
