"""The state of one BundleDeployment, the conditions the agent writes, and agent liveness.

Condition convention (the agent writes these on `BundleDeployment.status.conditions`):
- `Deployed`: the agent's last attempt to apply `spec.options` (write the Flux source and
  HelmRelease). `False` means that apply failed, with the cause as reason and message; the agent
  sets the condition's `observedGeneration` to the generation it tried, so a failure about an
  earlier spec is recognisably stale.
- `Ready`: the release. `False` carries the HelmRelease's own reason and message (e.g.
  `UpgradeFailed`), copied from Flux.

State, evaluated in this order (design §1): Pending (targeted, no BundleDeployment yet) ·
Offline (the caller says the cluster's agent has not checked in recently) · ErrApplied (applied ID
differs and `Deployed` is False for the current spec) · WaitApplied (applied ID differs) · NotReady
(`status.ready` false) · OutOfSync (a staged ID is set and differs from the current one) · Modified
(`status.nonModified` false) · Ready.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.meta import (
    CONDITION_REASON_MAX,
    CONDITION_REASON_PATTERN,
    CONDITIONS_MAX,
    Condition,
    ConditionStatus,
)
from bundler.api.summary import DeploymentState
from bundler.core.bounds import truncated

# The reason of a condition whose source gave none Kubernetes accepts.
UNKNOWN_REASON = "Unknown"
_REASON = re.compile(CONDITION_REASON_PATTERN)


class ConditionType(StrEnum):
    DEPLOYED = "Deployed"
    READY = "Ready"
    # A Bundle's clusterGroups and dependsOn name existing objects (present only while False).
    REFERENCES = "References"
    # A Bundle's spec.images all resolved (present only for a Bundle with images).
    IMAGES_RESOLVED = "ImagesResolved"
    # A BundleDeployment's release was changed on its cluster (present only while True): Flux's
    # drift detection says what changed.
    MODIFIED = "Modified"
    # A Cluster's Flux serves what bundler writes (present once its agent has checked).
    FLUX_SUPPORTED = "FluxSupported"
    # A Bundle's rollout waits at a gate: an approval, a bake, a maintenance window (present only
    # while True).
    ROLLOUT_GATED = "RolloutGated"


def deployment_state(bd: BundleDeployment | None, *, offline: bool = False) -> DeploymentState:
    """The state of a targeted cluster's BundleDeployment (None: not created yet)."""
    if bd is None:
        return DeploymentState.PENDING
    if offline:
        return DeploymentState.OFFLINE
    status = bd.status
    applied = status.appliedDeploymentID if status is not None else None
    if applied != bd.spec.deploymentID:
        return DeploymentState.ERR_APPLIED if _apply_failed(bd) else DeploymentState.WAIT_APPLIED
    if status is None or not status.ready:
        return DeploymentState.NOT_READY
    staged = bd.spec.stagedDeploymentID
    if staged is not None and staged != bd.spec.deploymentID:
        return DeploymentState.OUT_OF_SYNC
    if not status.nonModified:
        return DeploymentState.MODIFIED
    return DeploymentState.READY


def _apply_failed(bd: BundleDeployment) -> bool:
    deployed = find_condition(bd, ConditionType.DEPLOYED)
    if deployed is None or deployed.status is not ConditionStatus.FALSE:
        return False
    # A failure recorded for an earlier generation says nothing about the spec now in place.
    tried = deployed.observedGeneration
    return tried is None or bd.metadata.generation is None or tried >= bd.metadata.generation


def find_condition(bd: BundleDeployment, type: ConditionType) -> Condition | None:
    conditions = bd.status.conditions if bd.status is not None else []
    return next((c for c in conditions if c.type == type.value), None)


def state_message(bd: BundleDeployment | None) -> str:
    """`reason: message` of the condition behind an ErrApplied, WaitApplied, NotReady or Modified
    state, else "". For WaitApplied that is the agent's own reason (waiting for a dependsOn
    bundle, paused) once it has seen the deployment."""
    if bd is None:
        return ""
    state = deployment_state(bd)
    if state is DeploymentState.MODIFIED:
        modified = find_condition(bd, ConditionType.MODIFIED)
        return "" if modified is None else f"{modified.reason}: {modified.message}"
    failing = {
        DeploymentState.ERR_APPLIED: ConditionType.DEPLOYED,
        DeploymentState.WAIT_APPLIED: ConditionType.DEPLOYED,
        DeploymentState.NOT_READY: ConditionType.READY,
    }.get(state)
    found = find_condition(bd, failing) if failing is not None else None
    if found is None or found.status is ConditionStatus.TRUE:
        return ""
    if state is DeploymentState.WAIT_APPLIED and found.status is not ConditionStatus.UNKNOWN:
        return ""  # a failure of an earlier generation: not why it waits now
    return ": ".join(part for part in (found.reason, found.message) if part)


def is_offline(last_seen: str | None, now: datetime, threshold: timedelta) -> bool:
    """Whether an agent last seen at `last_seen` (RFC 3339) is older than `threshold` at `now`.

    Never seen, or a timestamp that does not parse, counts as offline: nothing shows the agent
    alive. Timestamps without a zone are read as UTC.
    """
    if last_seen is None:
        return True
    try:
        seen = datetime.fromisoformat(last_seen)
    except ValueError:
        return True
    return as_utc(now) - as_utc(seen) > threshold


def as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def is_condition_reason(reason: object) -> bool:
    """Whether `reason` is a reason Kubernetes accepts on a condition (metav1.Condition)."""
    return (
        isinstance(reason, str)
        and 0 < len(reason) <= CONDITION_REASON_MAX
        and _REASON.fullmatch(reason) is not None
    )


def condition(
    type: str,
    status: ConditionStatus | bool,
    reason: str,
    message: str,
    now_iso: str,
    previous: Sequence[Condition],
    *,
    observed_generation: int | None = None,
) -> list[Condition]:
    """`previous` with the condition of `type` set (replaced in place, or appended).

    lastTransitionTime is kept while the status stays the same, and is `now_iso` when it changes,
    as Kubernetes' meta.SetStatusCondition does. `message` (often someone else's: Flux's, an
    agent's, a registry's) is truncated (bundler.core.bounds), so are the messages of the conditions
    carried over (an agent may write its Cluster's), a `reason` Kubernetes would refuse
    (Flux's, when missing) becomes UNKNOWN_REASON, and the list keeps at most CONDITIONS_MAX
    conditions, this one always among them.
    """
    if isinstance(status, bool):
        status = ConditionStatus.TRUE if status else ConditionStatus.FALSE
    if not is_condition_reason(reason):
        reason = UNKNOWN_REASON
    old = next((c for c in previous if c.type == type), None)
    kept = old.lastTransitionTime if old is not None and old.status is status else None
    new = Condition(
        type=type,
        status=status,
        reason=reason,
        message=truncated(message),
        lastTransitionTime=kept or now_iso,
        observedGeneration=observed_generation,
    )
    replaced = [new if c.type == type else _bounded(c) for c in previous]
    updated = replaced if old is not None else [*replaced, new]
    if len(updated) <= CONDITIONS_MAX:
        return updated
    return [*[c for c in updated if c.type != type][: CONDITIONS_MAX - 1], new]


def _bounded(kept: Condition) -> Condition:
    """A condition carried over (maybe written by an agent), its message truncated."""
    message = truncated(kept.message)
    return kept if message == kept.message else kept.model_copy(update={"message": message})


def conditions_equal_ignoring_time(a: Sequence[Condition], b: Sequence[Condition]) -> bool:
    """Same conditions, whatever their order and lastTransitionTime: nothing worth writing."""
    return _timeless(a) == _timeless(b)


def _timeless(conditions: Sequence[Condition]) -> list[Condition]:
    stripped = (c.model_copy(update={"lastTransitionTime": None}) for c in conditions)
    return sorted(stripped, key=lambda c: c.type)
