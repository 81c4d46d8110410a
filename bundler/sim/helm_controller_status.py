"""HelmRelease status as Flux's helm-controller writes it, for the simulated Flux. Pure.

Shapes follow helm.toolkit.fluxcd.io/v2 (and validate against its CRD): `history` holds release
snapshots newest first (a superseded release is marked so, a failed upgrade leaves the previous one
deployed), `conditions` carry Ready and Released with Flux's reasons and message formats
("Helm install succeeded for release ns/name.v1 with chart podinfo@6.7.1").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

Obj = dict[str, Any]

DEFAULT_MAX_HISTORY = 5
READY = "Ready"
RELEASED = "Released"
RECONCILING = "Reconciling"


class Action(StrEnum):
    INSTALL = "install"
    UPGRADE = "upgrade"


class FluxReason(StrEnum):
    INSTALL_SUCCEEDED = "InstallSucceeded"
    INSTALL_FAILED = "InstallFailed"
    UPGRADE_SUCCEEDED = "UpgradeSucceeded"
    UPGRADE_FAILED = "UpgradeFailed"
    PROGRESSING = "Progressing"
    DEPENDENCY_NOT_READY = "DependencyNotReady"
    ARTIFACT_FAILED = "ArtifactFailed"
    REST_CLIENT_ERROR = "RESTClientError"


@dataclass(frozen=True)
class ReleaseAttempt:
    """One Helm install or upgrade the simulated controller performed."""

    name: str
    namespace: str
    chart: str
    chart_version: str
    values: Mapping[str, Any]
    generation: int
    failure: str | None
    now: str


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return f"sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def action_for(history: Sequence[Mapping[str, Any]], name: str, namespace: str) -> Action:
    """Upgrade when a release of that name and namespace exists, else install."""
    if history and history[0].get("name") == name and history[0].get("namespace") == namespace:
        return Action.UPGRADE
    return Action.INSTALL


def flux_condition(
    type: str, status: bool | None, reason: str, message: str, generation: int, now: str
) -> Obj:
    text = "Unknown" if status is None else ("True" if status else "False")
    return {
        "type": type,
        "status": text,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": now,
    }


def with_conditions(status: Mapping[str, Any], *conditions: Obj) -> Obj:
    """`status` with these conditions set; a condition keeps its time while its status holds."""
    merged = [dict(c) for c in status.get("conditions") or []]
    for new in conditions:
        old = next((c for c in merged if c.get("type") == new["type"]), None)
        if old is None:
            merged.append(new)
            continue
        if old.get("status") == new["status"]:
            new = {
                **new,
                "lastTransitionTime": old.get("lastTransitionTime", new["lastTransitionTime"]),
            }
        merged[merged.index(old)] = new
    return {**status, "conditions": merged}


def without_condition(status: Mapping[str, Any], type: str) -> Obj:
    kept = [c for c in status.get("conditions") or [] if c.get("type") != type]
    return {**status, "conditions": kept}


def progressing(status: Mapping[str, Any], action: Action, generation: int, now: str) -> Obj:
    """Flux's status while a Helm action runs: Reconciling, and Ready Unknown."""
    message = f"Running '{action.value}' action with timeout of 5m0s"
    return with_conditions(
        status,
        flux_condition(RECONCILING, True, FluxReason.PROGRESSING, message, generation, now),
        flux_condition(READY, None, FluxReason.PROGRESSING, message, generation, now),
    )


def not_ready(
    status: Mapping[str, Any], reason: FluxReason, message: str, generation: int, now: str
) -> Obj:
    return with_conditions(status, flux_condition(READY, False, reason, message, generation, now))


def released(status: Mapping[str, Any], attempt: ReleaseAttempt, max_history: int) -> Obj:
    """The status after a Helm action: history, counters, Ready and Released."""
    history = list(status.get("history") or [])
    action = action_for(history, attempt.name, attempt.namespace)
    revision = int(history[0].get("version", 0)) + 1 if action is Action.UPGRADE else 1
    config_digest = digest(attempt.values)
    entry = _snapshot(attempt, revision, config_digest, history if action is Action.UPGRADE else [])
    if action is Action.INSTALL:
        history = []
    if attempt.failure is None:
        history = [_superseded(h) for h in history]
    history = [entry, *history][: max(1, max_history)]
    out: Obj = {
        **status,
        "history": history,
        "observedGeneration": attempt.generation,
        "lastAttemptedGeneration": attempt.generation,
        "lastAttemptedRevision": attempt.chart_version,
        "lastAttemptedReleaseAction": action.value,
        "lastAttemptedConfigDigest": config_digest,
        "storageNamespace": attempt.namespace,
    }
    out = _count_failures(out, action, attempt.failure is not None)
    reason, message = _outcome(action, attempt, revision)
    ok = attempt.failure is None
    out = without_condition(out, RECONCILING)
    return with_conditions(
        out,
        flux_condition(READY, ok, reason, message, attempt.generation, attempt.now),
        flux_condition(RELEASED, ok, reason, message, attempt.generation, attempt.now),
    )


def _snapshot(
    attempt: ReleaseAttempt, revision: int, config_digest: str, history: Sequence[Obj]
) -> Obj:
    first = history[-1].get("firstDeployed", attempt.now) if history else attempt.now
    identity = [attempt.namespace, attempt.name, revision, attempt.chart_version, config_digest]
    return {
        "name": attempt.name,
        "namespace": attempt.namespace,
        "version": revision,
        "status": "deployed" if attempt.failure is None else "failed",
        "chartName": attempt.chart,
        "chartVersion": attempt.chart_version,
        "appVersion": attempt.chart_version,
        "configDigest": config_digest,
        "digest": digest(identity),
        "firstDeployed": first,
        "lastDeployed": attempt.now,
    }


def _superseded(entry: Obj) -> Obj:
    return {**entry, "status": "superseded"} if entry.get("status") == "deployed" else entry


def _count_failures(status: Obj, action: Action, failed: bool) -> Obj:
    if not failed:
        return {**status, "failures": 0, "installFailures": 0, "upgradeFailures": 0}
    field = "installFailures" if action is Action.INSTALL else "upgradeFailures"
    return {
        **status,
        "failures": int(status.get("failures", 0)) + 1,
        field: int(status.get(field, 0)) + 1,
    }


def _outcome(action: Action, attempt: ReleaseAttempt, revision: int) -> tuple[FluxReason, str]:
    chart = f"{attempt.chart}@{attempt.chart_version}"
    if attempt.failure is None:
        reason = (
            FluxReason.INSTALL_SUCCEEDED
            if action is Action.INSTALL
            else FluxReason.UPGRADE_SUCCEEDED
        )
        release = f"{attempt.namespace}/{attempt.name}.v{revision}"
        return reason, f"Helm {action.value} succeeded for release {release} with chart {chart}"
    reason = FluxReason.INSTALL_FAILED if action is Action.INSTALL else FluxReason.UPGRADE_FAILED
    release = f"{attempt.namespace}/{attempt.name}"
    message = (
        f"Helm {action.value} failed for release {release} with chart {chart}: {attempt.failure}"
    )
    return reason, message
