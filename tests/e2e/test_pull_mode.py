"""Scenario 2: pull mode on the real components, from first install to uninstall.

Two clusters registered with `bundler cluster register`, each with a pull agent installed from its
chart; a Bundle whose values are templated per cluster becomes two real Helm releases. Then a label
change, a newly pushed chart version under maxUnavailable, a failing upgrade that Flux remediates
and bundler halts and rolls back, and the Bundle's deletion, which uninstalls both releases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.e2e.processes import wait_until
from tests.support.e2e.releases import helm_records, latest_record
from tests.support.e2e.tenancy import Tenancy

CLUSTERS = {"edge-1": {"region": "eu"}, "edge-2": {"region": "us"}}
# Real seconds a step may take: Flux and Helm do real work, on a shared machine.
PATIENCE = 180.0
VALUES = {"greeting": "hello ${ cluster.name }", "region": "${ cluster.labels.region }"}


@dataclass(frozen=True)
class Sample:
    """One look at a cluster's BundleDeployment during a rollout."""

    cluster: str
    wanted: str
    applied: str | None
    ready: bool


def _samples(tenancy: Tenancy, bundle: str) -> list[Sample]:
    """The bundle's BundleDeployments on every cluster, from one list: one snapshot of the API
    (a list per cluster namespace could see one cluster before a promotion, the other after)."""
    namespaces = {tenancy.cluster_namespace(cluster): cluster for cluster in CLUSTERS}
    found = []
    for bd in tenancy.management.list("bundledeployments.bundler.dev"):
        cluster = namespaces.get(bd["metadata"]["namespace"])
        if cluster is None or bd["metadata"]["labels"].get("bundler.dev/bundle-name") != bundle:
            continue
        status = bd.get("status") or {}
        found.append(
            Sample(
                cluster,
                bd["spec"]["deploymentID"],
                status.get("appliedDeploymentID"),
                bool(status.get("ready")),
            )
        )
    return found


def _records_say(tenancy: Tenancy, cluster: str, **expected: Any) -> bool:
    record = latest_record(tenancy.env.downstream[cluster], "app", tenancy.release_namespace)
    return record is not None and all(getattr(record, k) == v for k, v in expected.items())


def _released_values(tenancy: Tenancy, cluster: str) -> dict[str, Any]:
    record = latest_record(tenancy.env.downstream[cluster], "app", tenancy.release_namespace)
    return {} if record is None else record.values


def _eventually(tenancy: Tenancy, condition: Any, what: str) -> Any:
    return wait_until(condition, what, timeout=PATIENCE, supervisor=tenancy.env.supervisor)


@pytest.mark.timeout(1200)
def test_pull_mode_from_install_to_uninstall(tenancy: Tenancy) -> None:
    for version in ("1.0.0", "1.1.0"):
        tenancy.publish(version)
    for cluster, labels in CLUSTERS.items():
        tenancy.register(cluster, labels)
    tenancy.start_manager(f"--plain-http-registry={tenancy.env.registry.host}")
    for cluster in CLUSTERS:
        tenancy.start_pull_agent(cluster)
    release_namespace = tenancy.release_namespace
    strategy = {
        "maxUnavailable": 1,
        "onFailure": {"progressDeadline": "30s", "action": "Rollback"},
    }
    upgrade = {"remediation": {"retries": 1, "remediateLastFailure": True}}
    helm = {"version": "1.*", "values": VALUES, "pollInterval": "5s", "upgrade": upgrade}
    tenancy.apply(tenancy.app_bundle("app", helm, rolloutStrategy=strategy))

    # Two real releases, each with its own values; the range resolved once for both.
    _eventually(tenancy, lambda: tenancy.ready_clusters("app") == "2/2", "Bundle app READY 2/2")
    for cluster, labels in CLUSTERS.items():
        record = latest_record(tenancy.env.downstream[cluster], "app", release_namespace)
        assert record is not None
        assert (record.version, record.revision) == ("1.1.0", 1)
        assert record.values == {"greeting": f"hello {cluster}", "region": labels["region"]}
    bundle = tenancy.bundle("app")
    assert bundle is not None and bundle["status"]["resolvedVersion"] == "1.1.0"

    # A label change upgrades only that cluster's release.
    tenancy.management.kubectl(
        "label", "clusters.bundler.dev", "edge-2", "region=ap", "--overwrite",
        "-n", tenancy.workspace,
    )  # fmt: skip
    _eventually(
        tenancy,
        lambda: (
            _records_say(tenancy, "edge-2", revision=2, status="deployed")
            and _released_values(tenancy, "edge-2").get("region") == "ap"
        ),
        "edge-2's release to be upgraded with region ap",
    )
    _eventually(tenancy, lambda: tenancy.ready_clusters("app") == "2/2", "READY 2/2 again")
    assert _records_say(tenancy, "edge-1", revision=1)

    # A newly pushed version rolls out, never more than one cluster unavailable at once.
    tenancy.publish("1.2.0")
    seen: list[list[Sample]] = []

    def rolled_out() -> bool:
        samples = _samples(tenancy, "app")
        seen.append(samples)
        return all(_records_say(tenancy, c, version="1.2.0") for c in CLUSTERS) and all(
            s.ready and s.applied == s.wanted for s in samples
        )

    _eventually(tenancy, rolled_out, "chart 1.2.0 on both clusters")
    assert seen
    for samples in seen:
        unavailable = [s.cluster for s in samples if not (s.ready and s.applied == s.wanted)]
        assert len(unavailable) <= 1, f"more than maxUnavailable at once: {unavailable}"

    # A failing upgrade: Flux retries and rolls the Helm release back; bundler halts the rollout
    # (the other cluster never gets 2.0.0) and returns the failed cluster to 1.2.0.
    tenancy.publish("2.0.0", broken=True)
    tenancy.apply(tenancy.app_bundle("app", {**helm, "version": "2.0.0"}, rolloutStrategy=strategy))

    def rolled_back() -> bool:
        found = tenancy.bundle("app") or {}
        conditions = (found.get("status") or {}).get("conditions") or []
        return any(c.get("reason") == "RolledBack" for c in conditions)

    _eventually(tenancy, rolled_back, "the rollout of 2.0.0 to halt and roll back")
    tried = [
        c
        for c in CLUSTERS
        if any(
            r.version == "2.0.0"
            for r in helm_records(tenancy.env.downstream[c], "app", release_namespace)
        )
    ]
    assert len(tried) == 1, f"2.0.0 reached {tried}: maxUnavailable 1 and a halt allow one"
    (failed,) = tried
    failed_records = helm_records(tenancy.env.downstream[failed], "app", release_namespace)
    assert any(r.status == "failed" for r in failed_records), failed_records
    _eventually(
        tenancy,
        lambda: _records_say(tenancy, failed, version="1.2.0", status="deployed"),
        f"{failed} to be rolled back to 1.2.0",
    )
    untouched = next(c for c in CLUSTERS if c != failed)
    assert all(
        r.version != "2.0.0"
        for r in helm_records(tenancy.env.downstream[untouched], "app", release_namespace)
    )

    # Deleting the Bundle uninstalls both releases.
    tenancy.management.kubectl("delete", "bundles.bundler.dev", "app", "-n", tenancy.workspace)
    _eventually(
        tenancy,
        lambda: all(
            not helm_records(tenancy.env.downstream[c], "app", release_namespace)
            and tenancy.env.downstream[c].get("configmap", "app-values", release_namespace) is None
            for c in CLUSTERS
        ),
        "both releases to be uninstalled",
    )
