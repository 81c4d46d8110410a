"""What the agent decides for one BundleDeployment, and the status it writes back. Pure.

The agent observes a BundleDeployment, its sibling BundleDeployments (for dependsOn) and the live
HelmRelease, then:
- `decide` picks one step: APPLY the options (write the Flux objects), WAIT for dependencies (a new
  deploymentID is held back while a bundle it depends on is not Ready on this cluster), or HOLD a
  paused BundleDeployment (report status, change nothing);
- `read_release` turns the HelmRelease into readiness as Flux reports it: Ready means
  `status.observedGeneration == metadata.generation` and condition `Ready=True`; otherwise Flux's
  own reason and message (InstallFailed, UpgradeFailed, ArtifactFailed, ...) are passed on. Flux's
  `Drifted=True` (its drift detection found objects of the release changed on the cluster) is the
  BundleDeployment's `Modified` state, with Flux's list of what changed as the message; and while
  the release is not Ready, `release_objects` finds which of its objects are not: the ones the
  wait for the release's objects names in Flux's condition messages (`timeout waiting for:
  [Deployment/apps/web status: 'InProgress']`, or Helm's own `resource Deployment/apps/web not
  ready. status: InProgress, message: ...`) and the test hooks the newest history entry records as
  failed;
- `for_chart_version` holds that readiness back until Flux's newest release is of the chart version
  the options name: a new OCI chart version changes only the OCIRepository's tag, so the
  HelmRelease's generation stays and its Ready=True still describes the previous release;
- `release_ready` says whether the release is Ready as the status would say it, so the agent then
  evaluates the options' health checks (bundler.core.health); their results hold readiness back:
  Ready=False with HealthCheckFailed while one failed, HealthCheckPending while one is not healthy
  yet, the objects listed in `nonReadyStatus` and every result in `status.healthChecks`;
- `next_status` builds the BundleDeployment status following bundler.core.state's convention
  (`Deployed` = the last apply attempt, `Ready` = the release), and `status_changed` says whether
  it is worth writing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from bundler.api.bundledeployment import BundleDeployment, BundleDeploymentStatus, ReleaseStatus
from bundler.api.health import HealthCheckResult, HealthState
from bundler.api.meta import ConditionStatus
from bundler.api.summary import NON_READY_OBJECT_MESSAGE_MAX, NON_READY_OBJECTS_MAX, NonReadyStatus
from bundler.core.dependencies import accepts
from bundler.core.flux import bundle_name
from bundler.core.health import REASON_FAILED, REASON_PENDING
from bundler.core.state import ConditionType, condition, conditions_equal_ignoring_time
from bundler.core.versions import SemVer, tag_to_version
from bundler.errors import InvalidInputError

# On a HelmRelease: "true" when the bundle keeps its release installed after undeploying.
ANNOTATION_KEEP_RESOURCES = "bundler.dev/keep-resources"

FLUX_READY = "Ready"
# Set by helm-controller's drift detection (driftDetection.mode warn or enabled) on every check.
FLUX_DRIFTED = "Drifted"


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
    NOT_DEPLOYED = "NotDeployed"
    PROGRESSING = "Progressing"
    UNINSTALLING = "Uninstalling"
    SUSPENDED = "Suspended"


FLUX_NOT_INSTALLED_MESSAGE = (
    "the cluster does not serve {kinds}: install Flux's helm-controller and source-controller "
    "(e.g. `flux install --components=source-controller,helm-controller`)"
)


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
class ReleaseReport:
    """The HelmRelease as the BundleDeployment's status sees it."""

    ready: bool
    reason: str
    message: str
    release: ReleaseStatus | None = None
    # Flux's message when its last drift check found the release's objects changed, else None.
    drift: str | None = None
    # While not ready: the release's objects that are not (release_objects).
    objects: tuple[NonReadyStatus, ...] = ()


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


# -- reading the HelmRelease -------------------------------------------------------------------


def read_release(release: Mapping[str, Any] | None) -> ReleaseReport:
    """Readiness, reason, message and release details of a live HelmRelease (None: absent)."""
    if release is None:
        return ReleaseReport(False, Reason.NOT_DEPLOYED, "no HelmRelease has been written yet")
    meta = release.get("metadata") or {}
    spec = release.get("spec") or {}
    status = release.get("status") or {}
    where = f"HelmRelease {meta.get('namespace')}/{meta.get('name')}"
    report = _readiness(meta, spec, status, where)
    if not report.ready:
        report = replace(report, objects=release_objects(status))
    drifted = _flux_condition(status, FLUX_DRIFTED)
    if drifted is not None and drifted.get("status") == ConditionStatus.TRUE.value:
        return replace(report, drift=_text(drifted, "message") or f"{where} has drifted")
    return report


def _readiness(
    meta: Mapping[str, Any], spec: Mapping[str, Any], status: Mapping[str, Any], where: str
) -> ReleaseReport:
    details = _release_details(status)
    if meta.get("deletionTimestamp"):
        return ReleaseReport(False, Reason.UNINSTALLING, f"{where} is being deleted", details)
    if spec.get("suspend"):
        return ReleaseReport(False, Reason.SUSPENDED, f"{where} is suspended", details)
    generation = meta.get("generation")
    ready = _flux_condition(status, FLUX_READY)
    current = ready is not None and ready.get("observedGeneration") in (None, generation)
    if ready is not None and current and ready.get("status") == ConditionStatus.TRUE.value:
        if status.get("observedGeneration") == generation:
            return ReleaseReport(True, _text(ready, "reason"), _text(ready, "message"), details)
    elif ready is not None and current:
        return ReleaseReport(False, _text(ready, "reason"), _text(ready, "message"), details)
    observed = status.get("observedGeneration")
    message = (
        f"waiting for Flux to reconcile {where} "
        f"(generation {generation}, observed {observed if observed is not None else 'none'})"
    )
    return ReleaseReport(False, Reason.PROGRESSING, message, details)


# Flux's wait for a release's objects (fluxcd/pkg/ssa, helm-controller's default strategy):
# "timeout waiting for: [Deployment/apps/web status: 'InProgress', ClusterRole/r status: ...]",
# "failed early due to stalled resources: [... status: 'Failed': <error>]".
_FLUX_WAIT = re.compile(
    r"(?<![A-Za-z0-9/])(?P<kind>[A-Za-z][A-Za-z0-9]{0,62})/"
    r"(?:(?P<namespace>[a-z0-9][-a-z0-9.]{0,62})/)?"
    r"(?P<name>[a-z0-9][-a-z0-9.:]{0,252}) status: '(?P<status>\w{1,32})'"
    r"(?:: (?P<message>[^\n]*?))?"
    r"(?=, [A-Za-z][A-Za-z0-9]{0,62}/[^\s,]{1,320} status: '|\]|$)",
    re.MULTILINE,
)
# Helm's own wait (helm.sh/helm/v4 pkg/kube/statuswait.go), with the watcher strategy:
# "resource Deployment/apps/web not ready. status: InProgress, message: ...".
_HELM_WAIT = re.compile(
    r"resource (?P<kind>[^/\s]{1,63})/(?P<namespace>[^/\s]{0,63})/(?P<name>\S{1,253}) "
    r"not ready\. status: (?P<status>\w{1,32}), message: (?P<message>[^\n]*)"
)
_WAITS = (_FLUX_WAIT, _HELM_WAIT)
# How much of a message is searched: the bounded patterns make the search linear in it.
_SEARCHED_MAX = 32 * 1024
# The conditions whose messages carry what a Helm action met.
_ACTION_CONDITIONS = ("Ready", "Released", "TestSuccess", "Remediated")
_FAILED_HOOK = "Failed"


def release_objects(status: Mapping[str, Any]) -> tuple[NonReadyStatus, ...]:
    """The objects of a release that are not ready, as Flux reported them: those Helm's wait
    names in the HelmRelease's conditions, then the test hooks its newest history entry records
    as failed; each once, at most NON_READY_OBJECTS_MAX."""
    found: dict[tuple[str, str, str], NonReadyStatus] = {}
    for type in _ACTION_CONDITIONS:
        flux_condition = _flux_condition(status, type)
        if flux_condition is None or flux_condition.get("status") == ConditionStatus.TRUE.value:
            continue
        text = _text(flux_condition, "message")[:_SEARCHED_MAX]
        for match in (m for wait in _WAITS for m in wait.finditer(text)):
            kind, namespace, name = match["kind"], match["namespace"] or "", match["name"]
            found.setdefault(
                (kind, namespace, name),
                NonReadyStatus(
                    kind=kind,
                    namespace=namespace,
                    name=name,
                    status=match["status"],
                    message=_cut((match["message"] or "").strip()),
                ),
            )
    for name, hook in _test_hooks(status):
        if hook.get("phase") == _FAILED_HOOK:
            namespace = _latest(status).get("namespace")
            found.setdefault(
                ("Pod", str(namespace or ""), name),
                NonReadyStatus(
                    kind="Pod",
                    namespace=str(namespace or ""),
                    name=name,
                    status=_FAILED_HOOK,
                    message="Helm test hook failed",
                ),
            )
    return tuple(found.values())[:NON_READY_OBJECTS_MAX]


def _latest(status: Mapping[str, Any]) -> Mapping[str, Any]:
    history = status.get("history")
    first = history[0] if isinstance(history, list) and history else None
    return first if isinstance(first, Mapping) else {}


def _test_hooks(status: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    hooks = _latest(status).get("testHooks")
    if not isinstance(hooks, Mapping):
        return []
    return sorted((str(k), v) for k, v in hooks.items() if isinstance(v, Mapping))


def _cut(message: str) -> str:
    if len(message) <= NON_READY_OBJECT_MESSAGE_MAX:
        return message
    return message[: NON_READY_OBJECT_MESSAGE_MAX - 3] + "..."


def _text(flux_condition: Mapping[str, Any], field: str) -> str:
    """A text field of Flux's condition; what is not text counts as missing."""
    value = flux_condition.get(field)
    return value if isinstance(value, str) else ""


def _flux_condition(status: Mapping[str, Any], type: str) -> Mapping[str, Any] | None:
    conditions = status.get("conditions") or []
    return next((c for c in conditions if isinstance(c, Mapping) and c.get("type") == type), None)


def for_chart_version(report: ReleaseReport, wanted: str | None) -> ReleaseReport:
    """`report`, or NotReady while Flux's newest release is not of chart version `wanted`.

    Only a Ready report is held back: Flux's own failures and progress are passed on as they are.
    Without a wanted version (Flux picks the latest) there is nothing to compare.
    """
    if not report.ready or not wanted:
        return report
    released = report.release.chartVersion if report.release is not None else None
    if released is not None and same_chart_version(released, wanted):
        return report
    last = f"last released {released}" if released else "no release recorded yet"
    message = f"waiting for Flux to release chart version {tag_to_version(wanted)} ({last})"
    return ReleaseReport(False, Reason.PROGRESSING, message, report.release, report.drift)


def same_chart_version(released: str, wanted: str) -> bool:
    """Whether Flux's `chartVersion` is the chart version `wanted` (a version or an OCI tag).

    Build metadata does not count: for an OCIRepository Flux replaces it with the artifact's digest
    (`6.1.0+0123456789ab`, unless its DisableChartDigestTracking gate is on). Text that is not
    SemVer compares as written.
    """
    released, wanted = tag_to_version(released), tag_to_version(wanted)
    try:
        return SemVer.parse(released) == SemVer.parse(wanted)
    except InvalidInputError:
        return released == wanted


def _release_details(status: Mapping[str, Any]) -> ReleaseStatus | None:
    """Name, namespace, chart version and revision of the newest entry of Flux's history."""
    history = status.get("history") or []
    if not history or not isinstance(history[0], Mapping):
        return None
    latest = history[0]
    revision = latest.get("version")
    return ReleaseStatus(
        name=latest.get("name"),
        namespace=latest.get("namespace"),
        chartVersion=latest.get("chartVersion"),
        revision=revision if isinstance(revision, int) else None,
    )


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
        # The Flux objects carry these options: their chart version is the one to wait for.
        return for_chart_version(report, bd.spec.options.helm.version)
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
            ConditionType.MODIFIED, True, FLUX_DRIFTED, report.drift, seen.now_iso, conditions
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
    if decision.step is Step.WAIT and report.reason == Reason.NOT_DEPLOYED:
        return ConditionStatus.FALSE, Reason.DEPENDENCY_NOT_READY, waiting_message(decision)
    status = ConditionStatus.TRUE if report.ready else ConditionStatus.FALSE
    return status, report.reason, report.message


def waiting_message(decision: Decision) -> str:
    names = ", ".join(decision.waiting_on)
    plural = "s" if len(decision.waiting_on) > 1 else ""
    return f"waiting for bundle{plural} {names} to be Ready on this cluster (dependsOn)"


def flux_not_installed_message(kinds: Iterable[str]) -> str:
    return FLUX_NOT_INSTALLED_MESSAGE.format(kinds=", ".join(sorted(kinds)))


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
