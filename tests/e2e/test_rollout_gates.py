"""Scenario 13: rollout gates on the real components.

Two pull-mode clusters in two partitions: edge-1 (canary) first, then edge-2 after a bake and an
approval given with `bundler rollout approve`, which `kubectl get bundles` shows in its GATE
column. Then a new spec with a health check on a real Deployment of the release, which never has
an available replica here (no kubelet, no deployment controller): Flux installs it without waiting
and reports the release Ready, the agent, under exactly its chart's RBAC, reads the Deployment and
finds the check failed, and the rollout halts before edge-2.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.e2e.deployment import bundler_cli
from tests.support.e2e.releases import latest_record
from tests.support.e2e.tenancy import Tenancy

CLUSTERS = {"edge-1": {"tier": "canary"}, "edge-2": {"tier": "main"}}
STRATEGY = {
    "partitions": [
        {"name": "canary", "clusterName": "edge-1"},
        {"name": "main", "clusterName": "edge-2"},
    ],
    # Short, as waits in tests are: the manager looks again when it ends.
    "bakeTime": "5s",
    "approval": {"partitions": ["main"]},
    "onFailure": {"action": "Halt"},
}
# Real seconds a step may take: Flux and Helm do real work, on a shared machine.
PATIENCE = 240.0
# The chart's `stuck` Deployment: nothing here ever makes a replica of it available.
UNAVAILABLE = "!has(status.availableReplicas) || status.availableReplicas < spec.replicas"


def _status(tenancy: Tenancy) -> dict[str, Any]:
    status: dict[str, Any] = (tenancy.bundle("app") or {}).get("status") or {}
    return status


def _gate_column(tenancy: Tenancy) -> str:
    """The GATE cell of `kubectl get bundles app` (empty when the rollout waits at none)."""
    shown = tenancy.management.kubectl(
        "get", "bundles", "app", "-n", tenancy.workspace,
        "-o", "custom-columns=GATE:.status.display.gate",
    ).stdout  # fmt: skip
    cell = shown.splitlines()[1].strip()
    return "" if cell == "<none>" else cell


def _version_on(tenancy: Tenancy, cluster: str) -> str | None:
    record = latest_record(tenancy.env.downstream[cluster], "app", tenancy.release_namespace)
    return None if record is None else record.version


def _ready_reason(tenancy: Tenancy) -> str | None:
    conditions = _status(tenancy).get("conditions") or []
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    return None if ready is None else ready.get("reason")


@pytest.mark.timeout(1200)
def test_a_bake_an_approval_and_a_failed_health_check(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    tenancy.publish("1.1.0", stuck=True)
    for cluster, labels in CLUSTERS.items():
        tenancy.register(cluster, labels)
    tenancy.start_manager(f"--plain-http-registry={tenancy.env.registry.host}")
    for cluster in CLUSTERS:
        tenancy.start_pull_agent(cluster)
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0"}, rolloutStrategy=STRATEGY))

    # canary first; main waits for canary's bake, then for an approval.
    tenancy.eventually(
        lambda: _gate_column(tenancy) == "WaitingForApproval(main)",
        "GATE WaitingForApproval(main)",
        timeout=PATIENCE,
        detail=lambda: str(_status(tenancy).get("rollout")),
    )
    assert _version_on(tenancy, "edge-1") == "1.0.0"
    assert _version_on(tenancy, "edge-2") is None
    header = tenancy.management.kubectl("get", "bundles", "-n", tenancy.workspace).stdout
    assert header.splitlines()[0].split() == ["NAME", "READY", "STATE", "VERSION", "GATE", "AGE"]
    canary, main = _status(tenancy)["rollout"]["partitions"]
    assert (canary["name"], canary["state"], canary["baked"]) == ("canary", "Ready", True)
    assert canary["readySince"]
    assert (main["name"], main["state"]) == ("main", "WaitingForApproval")
    assert _ready_reason(tenancy) == "WaitingForApproval"

    approved = bundler_cli(
        "rollout", "approve", f"{tenancy.workspace}/app", "--partition", "main",
        f"--kubeconfig={tenancy.management.admin_kubeconfig}",
    )  # fmt: skip
    assert "approved partition main" in approved.stdout
    tenancy.eventually(
        lambda: tenancy.ready_clusters("app") == "2/2", "READY 2/2", timeout=PATIENCE
    )
    assert _version_on(tenancy, "edge-2") == "1.0.0"
    assert _gate_column(tenancy) == ""

    # A new spec: Flux installs it on canary without waiting, the health check finds the
    # Deployment unavailable, and the rollout halts (the old approval would not do for main).
    check = {"kind": "Deployment", "name": "app-web", "current": "false", "failed": UNAVAILABLE}
    helm = {"version": "1.1.0", "upgrade": {"disableWait": True}}
    targets = [{"clusterSelector": {}, "healthChecks": [check]}]
    tenancy.apply(tenancy.app_bundle("app", helm, targets=targets, rolloutStrategy=STRATEGY))
    tenancy.eventually(
        lambda: _ready_reason(tenancy) == "RolloutHalted",
        "the rollout halted on the failed health check",
        timeout=PATIENCE,
        detail=lambda: str(_status(tenancy).get("conditions")),
    )
    assert _version_on(tenancy, "edge-1") == "1.1.0"
    assert _version_on(tenancy, "edge-2") == "1.0.0"
    (deployment,) = tenancy.bundle_deployments("edge-1")
    (result,) = deployment["status"]["healthChecks"]
    assert (result["kind"], result["name"], result["state"]) == ("Deployment", "app-web", "Failed")
    assert result["namespace"] == tenancy.release_namespace
    halted = next(c for c in _status(tenancy)["conditions"] if c["type"] == "Ready")
    assert f"{tenancy.workspace}/edge-1: HealthCheckFailed" in halted["message"]
    assert tenancy.forbidden() == []
