"""What the agent decides for one BundleDeployment, and the status it writes back. Pure.

The agent observes a BundleDeployment, its sibling BundleDeployments (for dependsOn) and the live
workload object of its delivery (bundler.core.delivery: the HelmRelease, for Helm), then:
- `decide` picks one step: APPLY the options (write the Flux objects), WAIT for dependencies (a new
  deploymentID is held back while a bundle it depends on is not Ready on this cluster), or HOLD a
  paused BundleDeployment (report status, change nothing);
- the delivery reads the workload into a ReleaseReport (readiness, drift, the objects not ready),
  held back until Flux's newest release is of the version the options name (`Delivery.current`);
- `release_ready` says whether the release is Ready as the status would say it, so the agent then
  evaluates the options' health checks (bundler.core.health); their results hold readiness back:
  Ready=False with HealthCheckFailed while one failed, HealthCheckPending while one is not healthy
  yet, the objects listed in `nonReadyStatus` and every result in `status.healthChecks`;
- `next_status` builds the BundleDeployment status following bundler.core.state's convention
  (`Deployed` = the last apply attempt, `Ready` = the release, `Modified` = the drift the delivery
  read), and `status_changed` says whether it is worth writing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from bundler.api.bundledeployment import BundleDeployment, BundleDeploymentStatus
from bundler.api.health import HealthCheckResult, HealthState
from bundler.api.meta import ConditionStatus
from bundler.api.summary import NON_READY_OBJECTS_MAX, NonReadyStatus
from bundler.core.delivery import ReleaseReport, ReportReason
from bundler.core.delivery.registry import delivery_for
from bundler.core.dependencies import accepts
from bundler.core.flux import bundle_name
from bundler.core.health import REASON_FAILED, REASON_PENDING
from bundler.core.state import ConditionType, condition, conditions_equal_ignoring_time

# On a HelmRelease: "true" when the bundle keeps its release installed after undeploying.
ANNOTATION_KEEP_RESOURCES = "bundler.dev/keep-resources"


class Reason(StrEnum):
    """Reasons the agent itself writes (Flux's own reasons are copied verbatim)."""

    APPLIED = "Applied"
    PAUSED = "Paused"
    DEPENDENCY_NOT_READY = "DependencyNotReady"
    FLUX_NOT_INSTALLED = "FluxNotInstalled"
    # The cluster's Flux lacks a field the options set (bundler.core.flux.requirements).
    FLUX_TOO_OLD = "FluxTooOld"
    INVALID_OPTIONS = "InvalidOptions"
    CREDENTIALS_NOT_FOUND = "CredentialsNotFound"
    VALUES_UNAVAILABLE = "ValuesUnavailable"
    APPLY_FAILED = "ApplyFailed"
    # The Modified condition's: the delivery read drift on its workload.
    DRIFTED = "Drifted"


class Step(StrEnum):
    APPLY = "apply"
    WAIT = "wait-dependencies"
    HOLD = "hold-paused"


@dataclass(frozen=True)
class Decision:
    step: Step
    # Bundles named in dependsOn that are not Ready on this cluster (WAIT only), sorted.
    waiting_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApplyOutcome:
    """How the apply went: `reason` None means the Flux objects are in place."""

    reason: Reason | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.reason is None


APPLIED = ApplyOutcome()


@dataclass(frozen=True)
class Observation:
    """Everything `next_status` needs besides the BundleDeployment itself; `health`: the health
    checks' results, when the release was Ready and they were evaluated."""

    decision: Decision
    outcome: ApplyOutcome | None
    report: ReleaseReport
    now_iso: str
    health: tuple[HealthCheckResult, ...] | None = None


# -- deciding ------------------------------------------------------------------------------------


def is_bd_ready(bd: BundleDeployment) -> bool:
    """Deployed as currently specified and its release Ready: what a dependent waits for."""
    status = bd.status
    return (
        status is not None and status.ready and status.appliedDeploymentID == bd.spec.deploymentID
    )


def unready_dependencies(bd: BundleDeployment, siblings: Iterable[BundleDeployment]) -> list[str]:
    """Bundles named in `bd`'s dependsOn whose BundleDeployment among `siblings` is missing or
    in no accepted state (bundler.core.dependencies.accepts: Ready unless acceptedStates say)."""
    by_bundle = {bundle_name(other): other for other in siblings}
    return sorted(
        {
            dep.name
            for dep in bd.spec.options.dependsOn
            if dep.name is not None and not accepts(dep, by_bundle.get(dep.name))
        }
    )


def decide(bd: BundleDeployment, unready: Sequence[str]) -> Decision:
    """HOLD when paused; WAIT while a dependency is not Ready and the options are new; else APPLY.

    Once a deploymentID is applied, the agent keeps it in place (and corrects drift) even if a
    dependency later stops being Ready: only new options wait.
    """
    if bd.spec.paused:
        return Decision(Step.HOLD)
    applied = bd.status.appliedDeploymentID if bd.status is not None else None
    if unready and applied != bd.spec.deploymentID:
        return Decision(Step.WAIT, tuple(sorted(unready)))
    return Decision(Step.APPLY)


# -- the status ----------------------------------------------------------------------------------


def _applied(bd: BundleDeployment, decision: Decision, outcome: ApplyOutcome | None) -> str | None:
    previous = bd.status.appliedDeploymentID if bd.status is not None else None
    if decision.step is Step.APPLY and outcome is not None and outcome.ok:
        return bd.spec.deploymentID
    return previous


def _release_report(
    bd: BundleDeployment, applied: str | None, report: ReleaseReport
) -> ReleaseReport:
    if applied == bd.spec.deploymentID:
        # The Flux objects carry these options: their version is the one to wait for.
        return delivery_for(bd.spec.options).current(report, bd.spec.options)
    return report


def release_ready(
    bd: BundleDeployment, decision: Decision, outcome: ApplyOutcome | None, report: ReleaseReport
) -> bool:
    """Whether the current options are applied and Flux reports their release Ready: when the
    options' health checks are looked at."""
    applied = _applied(bd, decision, outcome)
    return applied == bd.spec.deploymentID and _release_report(bd, applied, report).ready


def with_health(report: ReleaseReport, health: tuple[HealthCheckResult, ...]) -> ReleaseReport:
    """`report` held back by the health checks that are not healthy."""
    unhealthy = [h for h in health if h.state is not HealthState.HEALTHY]
    if not report.ready or not unhealthy:
        return report
    failed = [h for h in unhealthy if h.state is HealthState.FAILED]
    reason = REASON_FAILED if failed else REASON_PENDING
    named = "; ".join(
        f"{h.kind} {h.namespace + '/' if h.namespace else ''}{h.name}: {h.message}"
        for h in (failed or unhealthy)
    )
    objects = tuple(
        NonReadyStatus(
            kind=h.kind, namespace=h.namespace, name=h.name, status=h.state.value, message=h.message
        )
        for h in unhealthy[:NON_READY_OBJECTS_MAX]
    )
    verb = "failed" if failed else "not healthy yet"
    message = f"Flux reports the release Ready, but health checks {verb}: {named}"
    return replace(report, ready=False, reason=reason, message=message, objects=objects)


def next_status(bd: BundleDeployment, seen: Observation) -> BundleDeploymentStatus:
    """The status the agent wants on `bd` after observing (and maybe applying) it."""
    previous = bd.status or BundleDeploymentStatus()
    applied = _applied(bd, seen.decision, seen.outcome)
    report = _release_report(bd, applied, seen.report)
    if seen.health is not None:
        report = with_health(report, seen.health)
    deployed = _deployed_condition(bd, seen, applied)
    ready = _ready_condition(seen.decision, seen.outcome, report)
    conditions = condition(
        ConditionType.DEPLOYED,
        deployed[0],
        deployed[1],
        deployed[2],
        seen.now_iso,
        previous.conditions,
        observed_generation=bd.metadata.generation,
    )
    conditions = condition(
        ConditionType.READY, ready[0], ready[1], ready[2], seen.now_iso, conditions
    )
    if report.drift is not None:
        conditions = condition(
            ConditionType.MODIFIED, True, Reason.DRIFTED, report.drift, seen.now_iso, conditions
        )
    else:
        conditions = [c for c in conditions if c.type != ConditionType.MODIFIED]
    return BundleDeploymentStatus(
        appliedDeploymentID=applied,
        ready=report.ready,
        nonModified=report.drift is None,
        release=report.release,
        nonReadyStatus=[] if report.ready else list(report.objects),
        healthChecks=list(seen.health or ()),
        conditions=conditions,
    )


ConditionParts = tuple[ConditionStatus, str, str]


def _deployed_condition(
    bd: BundleDeployment, seen: Observation, applied: str | None
) -> ConditionParts:
    outcome, decision = seen.outcome, seen.decision
    if outcome is not None and not outcome.ok:
        return ConditionStatus.FALSE, str(outcome.reason), outcome.message
    current = applied == bd.spec.deploymentID
    if current:
        return ConditionStatus.TRUE, Reason.APPLIED, f"deployment {short_id(applied)} is applied"
    if decision.step is Step.WAIT:
        return ConditionStatus.UNKNOWN, Reason.DEPENDENCY_NOT_READY, waiting_message(decision)
    return (
        ConditionStatus.UNKNOWN,
        Reason.PAUSED,
        f"the BundleDeployment is paused: deployment {short_id(bd.spec.deploymentID)} waits",
    )


def _ready_condition(
    decision: Decision, outcome: ApplyOutcome | None, report: ReleaseReport
) -> ConditionParts:
    if outcome is not None and outcome.reason is Reason.FLUX_NOT_INSTALLED:
        return ConditionStatus.FALSE, outcome.reason, outcome.message
    if decision.step is Step.WAIT and report.reason == ReportReason.NOT_DEPLOYED:
        return ConditionStatus.FALSE, Reason.DEPENDENCY_NOT_READY, waiting_message(decision)
    status = ConditionStatus.TRUE if report.ready else ConditionStatus.FALSE
    return status, report.reason, report.message


def waiting_message(decision: Decision) -> str:
    names = ", ".join(decision.waiting_on)
    plural = "s" if len(decision.waiting_on) > 1 else ""
    return f"waiting for bundle{plural} {names} to be Ready on this cluster (dependsOn)"


def flux_not_installed_message(kinds: Iterable[str], install_hint: str) -> str:
    """The cluster does not serve `kinds`; `install_hint`: what to install (Delivery's)."""
    return f"the cluster does not serve {', '.join(sorted(kinds))}: {install_hint}"


def short_id(deployment_id: str | None) -> str:
    """A deploymentID shortened for messages: `s-` and 12 hex digits."""
    return (deployment_id or "")[:14]


def status_changed(old: BundleDeploymentStatus | None, new: BundleDeploymentStatus) -> bool:
    """Whether `new` says anything `old` does not (condition timestamps alone do not count)."""
    if old is None:
        return True
    same = (
        old.appliedDeploymentID == new.appliedDeploymentID
        and old.ready == new.ready
        and old.nonModified == new.nonModified
        and old.release == new.release
        and old.nonReadyStatus == new.nonReadyStatus
        and old.healthChecks == new.healthChecks
        and conditions_equal_ignoring_time(old.conditions, new.conditions)
    )
    return not same


def status_patch(status: BundleDeploymentStatus) -> dict[str, Any]:
    """A merge patch that makes the status exactly `status` (absent fields are removed)."""
    wire = status.to_wire()
    body: dict[str, Any] = dict.fromkeys(BundleDeploymentStatus.model_fields)
    body.update(wire)
    return {"status": body}
