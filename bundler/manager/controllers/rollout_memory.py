"""The rollout memory the manager keeps on each BundleDeployment, and a rollout's failure gate.

With a Bundle's `rolloutStrategy.onFailure`, every promotion records in the BundleDeployment's
spec when it happened (`promotedAt`, the manager's clock: the progress deadline runs from it) and
the options it replaced if they were Ready there (`lastReady`, else the earlier `lastReady` is
kept); a rollback returns the cluster to `lastReady`, stages the failing options and records
`rolledBackFrom`. The spec is the manager's alone (the agent writes only status, and ignores these
fields), survives a manager restart, and has room for full options where an annotation's 256 KiB
would not. Without onFailure nothing is recorded: the specs stay exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bundler.api.bundle import Bundle, FailureAction
from bundler.api.bundledeployment import BundleDeployment
from bundler.core.durations import duration_seconds
from bundler.core.rollout import RolloutTarget, is_unavailable
from bundler.core.rollout_failures import RESUME, Halt, rollout_halt, seconds_to_deadline
from bundler.manager.memo.outcomes import Rejection
from bundler.store.protocol import Obj

REASON_HALTED = "RolloutHalted"
REASON_ROLLED_BACK = "RolledBack"
MEMORY_FIELDS = ("promotedAt", "lastReady", "rolledBackFrom")


@dataclass(frozen=True)
class Gate:
    """This pass's verdict on a Bundle's rollout: its halt, and when to look at it again."""

    watching: bool = False
    halt: Halt | None = None
    recheck_after: float | None = None

    @property
    def halted(self) -> str | None:
        """The hold reason the rollout core shows on every cluster the halt keeps back."""
        if self.halt is None:
            return None
        return f"rollout halted ({len(self.halt.failures)} clusters failed)"

    def rejection(self) -> Rejection | None:
        """The Bundle's Ready condition while halted."""
        if self.halt is None:
            return None
        rolled_back = self.halt.action is FailureAction.ROLLBACK
        reason = REASON_ROLLED_BACK if rolled_back else REASON_HALTED
        resume = f'; annotate the Bundle {RESUME}: "<generation>" to resume'
        return Rejection(reason, self.halt.message() + resume)


def gate(
    bundle: Bundle,
    targets: list[RolloutTarget],
    now: datetime,
    bake_failed: frozenset[str] = frozenset(),
) -> Gate:
    """The failure gate of this pass; `bake_failed`: clusters not Ready while their partition
    bakes (bundler.manager.controllers.rollout_gates)."""
    strategy = bundle.spec.rolloutStrategy
    on_failure = strategy.onFailure if strategy is not None else None
    if on_failure is None:
        return Gate()
    deadline = (
        None
        if on_failure.progressDeadline is None
        else timedelta(seconds=duration_seconds(on_failure.progressDeadline))
    )
    generation = str(bundle.metadata.generation or 0)
    halt = rollout_halt(
        strategy,
        targets,
        now=now,
        progress_deadline=deadline,
        resumed=bundle.metadata.annotations.get(RESUME) == generation,
        bake_failed=bake_failed,
    )
    return Gate(True, halt, seconds_to_deadline(targets, now, deadline))


def last_ready(current: BundleDeployment | None) -> Obj | None:
    """What `lastReady` becomes when `current` is replaced: its options if Ready, else kept."""
    if current is None:
        return None
    if not is_unavailable(current):
        return {
            "options": current.spec.options.to_wire(),
            "deploymentID": current.spec.deploymentID,
        }
    kept = current.spec.lastReady
    return None if kept is None else kept.to_wire()


def promoted(spec: Obj, previous: Obj | None, replaced: Obj | None, now_iso: str) -> Obj:
    """A promoted `spec` with its memory: carried over when the deploymentID stays."""
    remembered = dict(spec)
    if previous is not None and previous.get("deploymentID") == spec["deploymentID"]:
        for name in MEMORY_FIELDS:
            if name in previous:
                remembered[name] = previous[name]
        return remembered
    remembered["promotedAt"] = now_iso
    if replaced is not None:
        remembered["lastReady"] = replaced
    return remembered


def rolled_back(previous: Obj, wanted: Obj, now_iso: str) -> Obj:
    """`previous` returned to its lastReady options, the failing `wanted` staged."""
    back: Obj = previous["lastReady"]
    return {
        "options": back["options"],
        "deploymentID": back["deploymentID"],
        "stagedOptions": wanted["options"],
        "stagedDeploymentID": wanted["deploymentID"],
        "promotedAt": now_iso,
        "lastReady": back,
        "rolledBackFrom": wanted["deploymentID"],
    }
