"""HELM, the first delivery: a Helm chart through a Flux chart source and a HelmRelease. Pure.

The objects are bundler.core.flux.helm_objects'; the HelmRelease is read back as Flux reports it:
- `read_release` turns the HelmRelease into readiness: Ready means `status.observedGeneration ==
  metadata.generation` and condition `Ready=True`; otherwise Flux's own reason and message
  (InstallFailed, UpgradeFailed, ArtifactFailed, ...) are passed on. Flux's `Drifted=True` (its
  drift detection found objects of the release changed on the cluster) is the drift the
  BundleDeployment reports as `Modified`, with Flux's list of what changed as the message; and
  while the release is not Ready, `release_objects` finds which of its objects are not: the ones
  the wait for the release's objects names in Flux's condition messages (`timeout waiting for:
  [Deployment/apps/web status: 'InProgress']`, or Helm's own `resource Deployment/apps/web not
  ready. status: InProgress, message: ...`) and the test hooks the newest history entry records as
  failed;
- `for_chart_version` holds that readiness back until Flux's newest release is of the chart version
  the options name: a new OCI chart version changes only the OCIRepository's tag, so the
  HelmRelease's generation stays and its Ready=True still describes the previous release.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions, ReleaseStatus
from bundler.api.meta import ConditionStatus
from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY, Resource
from bundler.api.summary import NON_READY_OBJECT_MESSAGE_MAX, NON_READY_OBJECTS_MAX, NonReadyStatus
from bundler.core.content import credentials_secret, helm_options
from bundler.core.delivery import Delivery, Obj, ReleaseReport, ReportReason
from bundler.core.delivery.readiness import condition_text, flux_condition, flux_readiness
from bundler.core.flux import FluxTarget, bundle_name, release_object_name
from bundler.core.flux.helm_objects import build_flux_objects
from bundler.core.versions import SemVer, tag_to_version
from bundler.errors import InvalidInputError

# Set by helm-controller's drift detection (driftDetection.mode warn or enabled) on every check.
FLUX_DRIFTED = "Drifted"

_SOURCES = (HELM_REPOSITORY, OCI_REPOSITORY)
_KIND_RESOURCES = {res.kind: res for res in (HELM_RELEASE, *_SOURCES)}


def build(bd: BundleDeployment, target: FluxTarget) -> list[tuple[Resource, Obj]]:
    """The chart source and the HelmRelease for `bd`, in apply order."""
    return [(_KIND_RESOURCES[obj["kind"]], obj) for obj in build_flux_objects(bd, target).all()]


def workload_name(bd: BundleDeployment) -> str:
    return release_object_name(bundle_name(bd))


def current(report: ReleaseReport, options: DeploymentOptions) -> ReleaseReport:
    return for_chart_version(report, helm_options(options).version)


def secret_ref(options: DeploymentOptions) -> str | None:
    return credentials_secret(options)


def read_release(release: Mapping[str, Any] | None) -> ReleaseReport:
    """Readiness, reason, message and release details of a live HelmRelease (None: absent)."""
    if release is None:
        return ReleaseReport(
            False, ReportReason.NOT_DEPLOYED, "no HelmRelease has been written yet"
        )
    meta = release.get("metadata") or {}
    status = release.get("status") or {}
    where = f"HelmRelease {meta.get('namespace')}/{meta.get('name')}"
    report = flux_readiness(release, where, _release_details(status))
    if not report.ready:
        report = replace(report, objects=release_objects(status))
    drifted = flux_condition(status, FLUX_DRIFTED)
    if drifted is not None and drifted.get("status") == ConditionStatus.TRUE.value:
        return replace(report, drift=condition_text(drifted, "message") or f"{where} has drifted")
    return report


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
        found_condition = flux_condition(status, type)
        if found_condition is None or found_condition.get("status") == ConditionStatus.TRUE.value:
            continue
        text = condition_text(found_condition, "message")[:_SEARCHED_MAX]
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
    return ReleaseReport(False, ReportReason.PROGRESSING, message, report.release, report.drift)


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


HELM = Delivery(
    name="helm",
    sources=_SOURCES,
    workload=HELM_RELEASE,
    serves=lambda options: options.helm is not None,
    build=build,
    workload_name=workload_name,
    read=read_release,
    current=current,
    secret_ref=secret_ref,
    install_hint=(
        "install Flux's helm-controller and source-controller "
        "(e.g. `flux install --components=source-controller,helm-controller`)"
    ),
)
