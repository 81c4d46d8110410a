"""Status that tells the truth, on the real components: what `kubectl get` and `kubectl describe`
show of a Bundle whose upgrade Flux cannot finish.

A chart version holding a Deployment that never becomes available (there is no kubelet) makes the
real helm-controller's wait time out: the object it names reaches the Bundle's `status.nonReady`,
the rollout halts at its progress deadline, and the Bundle's Events (RolloutStarted, then
RolloutHalted) are what `kubectl describe` lists; STATE says RolloutHalted, VERSION the exact
version asked for.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.e2e.tenancy import Tenancy

PATIENCE = 240.0


def _status(tenancy: Tenancy) -> dict[str, Any]:
    status: dict[str, Any] = (tenancy.bundle("app") or {}).get("status") or {}
    return status


def _columns(tenancy: Tenancy) -> list[str]:
    """NAME READY STATE VERSION (GATE) AGE of `kubectl get bundles`, for the Bundle app."""
    shown = tenancy.management.kubectl("get", "bundles", "app", "-n", tenancy.workspace).stdout
    return shown.splitlines()[1].split()


def _events(tenancy: Tenancy, kind: str, name: str) -> list[dict[str, Any]]:
    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    found = tenancy.management.list("events", tenancy.workspace, f"--field-selector={selector}")
    return sorted(found, key=lambda e: e.get("firstTimestamp") or "")


@pytest.mark.timeout(900)
def test_a_stuck_upgrade_is_told_object_by_object_and_as_events(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    tenancy.publish("1.1.0", stuck=True)
    tenancy.register("edge-1", {"env": "e2e"})
    tenancy.start_manager(f"--plain-http-registry={tenancy.env.registry.host}")
    tenancy.start_pull_agent("edge-1")
    strategy = {"onFailure": {"progressDeadline": "20s", "action": "Halt"}}
    # Helm's wait names the object it gave up on, unless its client's rate limiter ends the wait
    # first ("rate: Wait(n=1) would exceed context deadline", seen under load): Flux retries the
    # upgrade until one attempt's failure names it.
    retry = {"strategy": {"name": "RetryOnFailure", "retryInterval": "5s"}}
    helm: dict[str, Any] = {"version": "1.0.0", "timeout": "15s", "upgrade": retry}
    tenancy.apply(tenancy.app_bundle("app", helm, rolloutStrategy=strategy))

    def eventually(condition: Any, what: str) -> Any:
        return tenancy.eventually(
            condition, what, timeout=PATIENCE, detail=lambda: f"status {_status(tenancy)}"
        )

    eventually(lambda: tenancy.ready_clusters("app") == "1/1", "Bundle app READY 1/1")
    assert _columns(tenancy)[1:4] == ["1/1", "Ready", "1.0.0"]  # VERSION: exact versions too

    tenancy.apply(tenancy.app_bundle("app", {**helm, "version": "1.1.0"}, rolloutStrategy=strategy))

    def stuck_object() -> tuple[dict[str, Any], list[str]] | None:
        (bd,) = tenancy.bundle_deployments("edge-1")
        named = [o["name"] for o in (bd.get("status") or {}).get("nonReadyStatus") or []]
        for entry in _status(tenancy).get("nonReady") or []:
            for obj in entry.get("nonReadyStatus") or []:
                if obj.get("kind") == "Deployment" and named:
                    return dict(obj), named
        return None

    found, named = eventually(stuck_object, "the Deployment Flux waits for in status.nonReady")
    assert found["name"] == "app-web" and found["namespace"] == tenancy.release_namespace
    assert found["status"] == "InProgress"
    assert named == ["app-web"]

    eventually(
        lambda: _status(tenancy).get("display", {}).get("state") == "RolloutHalted",
        "STATE RolloutHalted",
    )
    assert _columns(tenancy)[1:4] == ["0/1", "RolloutHalted", "1.1.0"]

    reasons = [(e["type"], e["reason"]) for e in _events(tenancy, "Bundle", "app")]
    assert reasons == [
        ("Normal", "RolloutStarted"),
        ("Normal", "RolloutStarted"),
        ("Warning", "RolloutHalted"),
    ], reasons
    described = tenancy.management.kubectl(
        "describe", "bundles.bundler.dev", "app", "-n", tenancy.workspace
    ).stdout
    events = described[described.index("Events:") :]
    assert "RolloutHalted" in events and "bundler-manager" in events, events
