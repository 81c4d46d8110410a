"""dependsOn by label selector with acceptedStates (Fleet's form), on the real components.

A Bundle `base` labelled tier=base never becomes Ready (its Deployment never becomes available:
there is no kubelet, and helm-controller's wait times out). `relaxed` depends on tier=base with
acceptedStates [NotReady, Ready]: it is installed all the same, and its HelmRelease does not
depend on base's in Flux (which would wait for Ready). `strict` depends on tier=base as Fleet's
default does (Ready): the agent holds it back and says why.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.e2e.releases import latest_record
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 240.0
BASE = {"matchLabels": {"tier": "base"}}


def _bundle_deployment(tenancy: Tenancy, bundle: str) -> dict[str, Any]:
    for bd in tenancy.bundle_deployments("edge-1"):
        if bd["metadata"]["labels"].get("bundler.dev/bundle-name") == bundle:
            return dict(bd)
    return {}


@pytest.mark.timeout(900)
def test_accepted_states_let_a_dependent_through_a_dependency_that_is_not_ready(
    tenancy: Tenancy,
) -> None:
    tenancy.publish("1.0.0")
    tenancy.publish("1.1.0", stuck=True)
    tenancy.register("edge-1", {"env": "e2e"})
    tenancy.start_manager(f"--plain-http-registry={tenancy.env.registry.host}")
    tenancy.start_pull_agent("edge-1")
    edge, namespace = tenancy.env.downstream["edge-1"], tenancy.release_namespace

    base = tenancy.app_bundle("base", {"version": "1.1.0", "timeout": "10s"})
    base["metadata"]["labels"] = {"tier": "base"}
    relaxed = tenancy.app_bundle(
        "relaxed",
        {"version": "1.0.0"},
        dependsOn=[{"selector": BASE, "acceptedStates": ["NotReady", "Ready"]}],
    )
    strict = tenancy.app_bundle("strict", {"version": "1.0.0"}, dependsOn=[{"selector": BASE}])
    tenancy.apply(base, relaxed, strict)

    def eventually(condition: Any, what: str) -> Any:
        return tenancy.eventually(
            condition,
            what,
            timeout=PATIENCE,
            detail=lambda: f"bundles {[tenancy.bundle(n) for n in ('base', 'relaxed', 'strict')]}",
        )

    eventually(lambda: tenancy.ready_clusters("relaxed") == "1/1", "relaxed READY 1/1")
    record = latest_record(edge, "relaxed", namespace)
    assert record is not None and record.status == "deployed"
    assert _bundle_deployment(tenancy, "relaxed")["spec"]["options"]["dependsOn"] == [
        {"name": "base", "acceptedStates": ["NotReady", "Ready"]}
    ]
    release = edge.get("helmreleases.helm.toolkit.fluxcd.io", "relaxed", tenancy.agent_namespace)
    assert release is not None and "dependsOn" not in release["spec"], release
    assert not (_bundle_deployment(tenancy, "base").get("status") or {}).get("ready")

    def strict_waits() -> bool:
        conditions = (_bundle_deployment(tenancy, "strict").get("status") or {}).get("conditions")
        return any(c.get("reason") == "DependencyNotReady" for c in conditions or [])

    eventually(strict_waits, "strict to wait for base (DependencyNotReady)")
    assert latest_record(edge, "strict", namespace) is None
    (entry,) = ((tenancy.bundle("strict") or {}).get("status") or {})["nonReady"]
    assert "waiting for bundle base" in entry["message"], entry
