"""Scenario 4: a release changed on its cluster is reported, then corrected.

Flux's drift detection (bundler's default `warn`) finds the ConfigMap edited with kubectl: the
BundleDeployment is Modified and the Bundle's roll-up says so, naming the object. With
`driftDetection.mode: enabled` Flux puts the object back and the state returns to Ready.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.e2e.processes import wait_until
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 180.0


def _status(tenancy: Tenancy) -> dict[str, Any]:
    found = tenancy.bundle("app") or {}
    status: dict[str, Any] = found.get("status") or {}
    return status


@pytest.mark.timeout(600)
def test_drift_is_reported_then_corrected(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    tenancy.register("edge-1", {"env": "e2e"})
    tenancy.start_manager()
    tenancy.start_pull_agent("edge-1")
    edge, namespace = tenancy.env.downstream["edge-1"], tenancy.release_namespace
    # Flux looks for drift at every reconcile: every 10 s here.
    helm = {"version": "1.0.0", "interval": "10s"}
    tenancy.apply(tenancy.app_bundle("app", helm))

    def eventually(condition: Any, what: str, detail: Any = None) -> Any:
        return wait_until(
            condition, what, timeout=PATIENCE, supervisor=tenancy.env.supervisor, detail=detail
        )

    eventually(lambda: tenancy.ready_clusters("app") == "1/1", "Bundle app READY 1/1")

    edge.kubectl(
        "patch", "configmap", "app-values", "-n", namespace, "--type=merge",
        "-p", '{"data": {"chartVersion": "edited by hand"}}',
    )  # fmt: skip
    eventually(lambda: _status(tenancy).get("summary", {}).get("modified") == 1, "modified: 1")
    status = _status(tenancy)
    assert status["display"]["state"] == "Modified"
    (entry,) = status["nonReady"]
    assert entry["state"] == "Modified"
    assert "app-values" in entry["message"], entry
    (bd,) = tenancy.bundle_deployments("edge-1")
    assert bd["status"]["nonModified"] is False

    tenancy.apply(tenancy.app_bundle("app", {**helm, "driftDetection": {"mode": "enabled"}}))

    def chart_version_shown() -> str:
        found = edge.get("configmap", "app-values", namespace) or {}
        return str(found.get("data", {}).get("chartVersion", ""))

    # The chart's own value: the version, with Flux's digest of the OCI artifact as build metadata.
    eventually(
        lambda: chart_version_shown().startswith("1.0.0+"),
        "Flux to correct the ConfigMap",
        lambda: f"chartVersion {chart_version_shown()!r}",
    )
    eventually(lambda: _status(tenancy).get("display", {}).get("state") == "Ready", "Ready")
    (bd,) = tenancy.bundle_deployments("edge-1")
    assert bd["status"]["nonModified"] is True
