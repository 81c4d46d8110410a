"""How a Flux workload object (a HelmRelease, a Kustomization) says it is ready: Flux's Ready
condition for the current generation, or why not (being deleted, suspended, still reconciling).
Pure; shared by the deliveries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.api.bundledeployment import ReleaseStatus
from bundler.api.meta import ConditionStatus
from bundler.core.delivery import ReleaseReport, ReportReason

FLUX_READY = "Ready"


def flux_readiness(
    obj: Mapping[str, Any], where: str, details: ReleaseStatus | None
) -> ReleaseReport:
    """Ready means `status.observedGeneration == metadata.generation` and condition Ready=True
    of that generation; otherwise Flux's own reason and message, or a reason of bundler's own
    (Uninstalling, Suspended, Progressing). `where` names the object in messages."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if meta.get("deletionTimestamp"):
        return ReleaseReport(False, ReportReason.UNINSTALLING, f"{where} is being deleted", details)
    if spec.get("suspend"):
        return ReleaseReport(False, ReportReason.SUSPENDED, f"{where} is suspended", details)
    generation = meta.get("generation")
    ready = flux_condition(status, FLUX_READY)
    current = ready is not None and ready.get("observedGeneration") in (None, generation)
    if ready is not None and current and ready.get("status") == ConditionStatus.TRUE.value:
        if status.get("observedGeneration") == generation:
            return ReleaseReport(
                True, condition_text(ready, "reason"), condition_text(ready, "message"), details
            )
    elif ready is not None and current:
        return ReleaseReport(
            False, condition_text(ready, "reason"), condition_text(ready, "message"), details
        )
    observed = status.get("observedGeneration")
    message = (
        f"waiting for Flux to reconcile {where} "
        f"(generation {generation}, observed {observed if observed is not None else 'none'})"
    )
    return ReleaseReport(False, ReportReason.PROGRESSING, message, details)


def condition_text(flux_condition: Mapping[str, Any], field: str) -> str:
    """A text field of Flux's condition; what is not text counts as missing."""
    value = flux_condition.get(field)
    return value if isinstance(value, str) else ""


def flux_condition(status: Mapping[str, Any], type: str) -> Mapping[str, Any] | None:
    conditions = status.get("conditions") or []
    return next((c for c in conditions if isinstance(c, Mapping) and c.get("type") == type), None)
