"""Failing rollouts: which promoted clusters failed, whether the rollout halts, who rolls back.

With `rolloutStrategy.onFailure`, a cluster has failed the rollout to its desired deploymentID when
its BundleDeployment carries that ID and is ErrApplied, or carries it and is not Ready on it
`progressDeadline` after the manager promoted it (`spec.promotedAt`; "now" is the caller's), or
carries it applied with a failed health check (Ready=False, HealthCheckFailed), or
was rolled back from it (`spec.rolledBackFrom`), or is not Ready on it while its partition,
having been Ready, bakes (`bake_failed`, bundler.core.rollout_gates.bake_failures). Counting is
per rollout: a failure only counts against the deploymentID the cluster is wanted on now, so a
new Bundle generation (new IDs) starts afresh. A cluster that heals (Ready on the new ID) no
longer counts. An Offline cluster is never failed by the deadline unless `offlineClusters:
Block`: it has not had the chance.

Once more clusters failed than `maxFailures` (default 0; a percentage is of all targets) the
rollout halts: nothing more is promoted or created. With `action: Rollback` each failed cluster
that still runs the failing deployment and has `spec.lastReady` (options that were Ready there)
is returned to those; a cluster without them keeps what it runs. The Bundle annotation RESUME
naming the current generation lifts the halt for that generation.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bundler.api.bundle import FailureAction, OfflineClusters, RolloutStrategy
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.summary import DeploymentState
from bundler.core.health import REASON_FAILED as REASON_HEALTH_FAILED
from bundler.core.rollout import RolloutTarget, is_unavailable, resolve_int_or_percent
from bundler.core.state import (
    ConditionType,
    as_utc,
    deployment_state,
    find_condition,
    state_message,
)

RESUME = "bundler.dev/resume-rollout"
DEFAULT_MAX_FAILURES = 0
# Seconds past a deadline to look again: it is strict, and any instant after it will do.
DEADLINE_MARGIN = 0.01
# Failed clusters a halt message names (the count always covers all of them).
NAMED_MAX = 5


@dataclass(frozen=True)
class Failure:
    cluster: str
    reason: str


@dataclass(frozen=True)
class Halt:
    """A halted rollout: the failures, the limit they exceeded, and the clusters to roll back."""

    action: FailureAction
    failures: tuple[Failure, ...]
    max_failures: int
    rollback: frozenset[str]

    def message(self) -> str:
        named = "; ".join(f"{f.cluster}: {f.reason}" for f in self.failures[:NAMED_MAX])
        more = len(self.failures) - NAMED_MAX
        rest = f"; and {more} more" if more > 0 else ""
        return (
            f"{len(self.failures)} clusters failed the rollout, maxFailures is "
            f"{self.max_failures}: {named}{rest}"
        )


def rollout_halt(
    strategy: RolloutStrategy | None,
    targets: Sequence[RolloutTarget],
    *,
    now: datetime,
    progress_deadline: timedelta | None,
    resumed: bool,
    bake_failed: Collection[str] = (),
) -> Halt | None:
    """The halt on this rollout, or None while it may proceed (or has no onFailure);
    `bake_failed`: the clusters not Ready while their partition bakes."""
    on_failure = strategy.onFailure if strategy is not None else None
    if on_failure is None or resumed:
        return None
    assert strategy is not None
    patient = strategy.offlineClusters is not OfflineClusters.BLOCK
    failures = tuple(
        found
        for t in targets
        if (
            found := failure_of(
                t, now, progress_deadline, patient=patient, baking=t.key in bake_failed
            )
        )
        is not None
    )
    limit = resolve_int_or_percent(on_failure.maxFailures, len(targets), DEFAULT_MAX_FAILURES)
    if len(failures) <= limit:
        return None
    action = on_failure.action or FailureAction.HALT
    failed = {f.cluster for f in failures}
    rollback = frozenset(
        t.key for t in targets if action is FailureAction.ROLLBACK and _can_roll_back(t, failed)
    )
    return Halt(action, failures, limit, rollback)


def failure_of(
    target: RolloutTarget,
    now: datetime,
    deadline: timedelta | None,
    *,
    patient: bool,
    baking: bool = False,
) -> Failure | None:
    """How `target` failed its rollout to its desired deploymentID, if it did (`baking`: its
    partition was Ready on its deployments and bakes)."""
    bd = target.current
    if bd is None:
        return None
    if bd.spec.rolledBackFrom == target.desired_id:
        return Failure(target.key, "rolled back from the failing deployment")
    if bd.spec.deploymentID != target.desired_id:
        return None
    if deployment_state(bd) is DeploymentState.ERR_APPLIED:
        return Failure(target.key, state_message(bd) or "the agent failed to apply it")
    if _health_check_failed(bd):
        return Failure(target.key, state_message(bd))
    if baking and is_unavailable(bd) and not (patient and target.offline):
        why = state_message(bd) or "not Ready"
        return Failure(target.key, f"not Ready during its partition's bake: {why}")
    if deadline is None or not is_unavailable(bd) or (patient and target.offline):
        return None
    promoted = _parsed(bd.spec.promotedAt)
    if promoted is None or as_utc(now) - promoted <= deadline:
        return None
    why = state_message(bd) or "not Ready"
    return Failure(target.key, f"not Ready within progressDeadline: {why}")


def seconds_to_deadline(
    targets: Sequence[RolloutTarget], now: datetime, deadline: timedelta | None
) -> float | None:
    """Seconds until the next promoted, not yet Ready cluster passes the deadline; None: none."""
    if deadline is None:
        return None
    waits = [
        (promoted + deadline - as_utc(now)).total_seconds()
        for t in targets
        if t.current is not None
        and t.current.spec.deploymentID == t.desired_id
        and is_unavailable(t.current)
        and (promoted := _parsed(t.current.spec.promotedAt)) is not None
    ]
    upcoming = [w for w in waits if w >= 0]
    # The deadline is strict (older than it): come back just past the edge.
    return min(upcoming) + DEADLINE_MARGIN if upcoming else None


def _health_check_failed(bd: BundleDeployment) -> bool:
    """Applied, and the agent found one of its health checks failed (bundler.core.health)."""
    status = bd.status
    if status is None or status.appliedDeploymentID != bd.spec.deploymentID or status.ready:
        return False
    ready = find_condition(bd, ConditionType.READY)
    return ready is not None and ready.reason == REASON_HEALTH_FAILED


def _can_roll_back(target: RolloutTarget, failed: set[str]) -> bool:
    bd = target.current
    return (
        target.key in failed
        and bd is not None
        and bd.spec.deploymentID == target.desired_id
        and bd.spec.lastReady is not None
        and bd.spec.lastReady.deploymentID != target.desired_id
    )


def _parsed(moment: str | None) -> datetime | None:
    if moment is None:
        return None
    try:
        return as_utc(datetime.fromisoformat(moment))
    except ValueError:
        return None
