"""Scenario 8: a cold start of 200 Clusters x 10 Bundles, the manager alone, against the real
management API server and against the stand-in, side by side.

The manager runs as users run it (the chart's arguments, a ServiceAccount token with exactly the
chart's RBAC), starting on a workspace that already holds the Clusters and Bundles. Measured until
every Bundle's status counts its 200 BundleDeployments and the manager's work queues are empty:
wall time, the manager's CPU, its HTTP requests per BundleDeployment (its own counter) and, on the
real server, `apiserver_request_total` over the same window (everything the server answered: the
controller manager's work for 200 new namespaces included). Figures go to build/e2e-figures.json;
the test asserts only that the cold start completed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.core.labels import LABEL_BUNDLE_NAMESPACE
from bundler.kube.store import KubeStore
from bundler.store.protocol import Obj
from tests.support.e2e.deployment import MANAGER_NAMESPACE, outside_the_pod, start_bundler
from tests.support.e2e.figures import (
    counter_total,
    cpu_seconds,
    gauge_value,
    record,
    scrape,
)
from tests.support.e2e.ports import free_port, loopback
from tests.support.e2e.processes import Process, wait_until
from tests.support.e2e.tenancy import Tenancy
from tests.support.identities import manager_kubeconfig

CLUSTERS = 200
BUNDLES = 10
REGIONS = ("eu", "us", "ap", "sa")
COLD_START_PATIENCE = 900.0


_EU_OVERRIDE = {
    "clusterSelector": {"matchLabels": {"region": "eu"}},
    "helm": {"values": {"replicas": 3}},
}
_SCALE_EXPRESSION = {
    "clusterSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["scale"]}]}
}


def _world(workspace: str, chart_base: str) -> tuple[list[Obj], list[Obj]]:
    """Clusters with varied labels and values; Bundles whose values read them, some with
    overrides for a region."""
    clusters = [
        {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Cluster",
            "metadata": {
                "name": f"c{index:03}",
                "namespace": workspace,
                "labels": {"env": "scale", "region": REGIONS[index % len(REGIONS)]},
            },
            "spec": {"values": {"index": index, "zone": f"z{index % 7}"}},
        }
        for index in range(CLUSTERS)
    ]
    bundles = [
        {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Bundle",
            "metadata": {"name": f"b{index:02}", "namespace": workspace},
            "spec": {
                "helm": {
                    "repo": chart_base,
                    "chart": "e2e-app",
                    "version": "1.0.0",
                    "values": {
                        "cluster": "${ cluster.name }",
                        "region": "${ cluster.labels.region }",
                        "zone": "${ cluster.values.zone }",
                        "bundle": index,
                    },
                },
                "namespace": f"app-{index}",
                "targets": [_EU_OVERRIDE, _SCALE_EXPRESSION],
            },
        }
        for index in range(BUNDLES)
    ]
    return clusters, bundles


def _settled(store: KubeStore, workspace: str, metrics: str) -> bool:
    bundles = store.list(BUNDLE, workspace).items
    if len(bundles) != BUNDLES:
        return False
    for bundle in bundles:
        summary = (bundle.get("status") or {}).get("summary") or {}
        if summary.get("desiredReady") != CLUSTERS or summary.get("waitApplied") != CLUSTERS:
            return False
    text = scrape(metrics)
    return (
        gauge_value(text, "bundler_workqueue_depth")
        + gauge_value(text, "bundler_workqueue_in_flight")
        == 0
    )


def _cold_start(
    store: KubeStore,
    workspace: str,
    chart_base: str,
    start_manager: Callable[[str], Process],
    server_requests: Callable[[], float] | None,
) -> dict[str, Any]:
    clusters, bundles = _world(workspace, chart_base)
    for obj in clusters:
        store.create(CLUSTER, obj)
    for obj in bundles:
        store.create(BUNDLE, obj)
    before = server_requests() if server_requests is not None else None
    metrics = loopback(free_port())
    started = time.monotonic()
    manager = start_manager(metrics)
    wait_until(
        lambda: _settled(store, workspace, metrics),
        f"the manager's cold start of {CLUSTERS} x {BUNDLES}",
        timeout=COLD_START_PATIENCE,
        interval=0.5,
    )
    wall = time.monotonic() - started
    assert manager.popen is not None
    cpu = cpu_seconds(manager.popen.pid)
    text = scrape(metrics)
    requests = counter_total(text, "bundler_kube_requests")
    throttled = counter_total(text, "bundler_kube_rate_limiter_wait_seconds")
    deployments = store.list(BUNDLE_DEPLOYMENT, None, {LABEL_BUNDLE_NAMESPACE: workspace}).items
    assert len(deployments) == CLUSTERS * BUNDLES
    figures: dict[str, Any] = {
        "clusters": CLUSTERS,
        "bundles": BUNDLES,
        "bundle_deployments": len(deployments),
        "wall_seconds": round(wall, 2),
        "manager_cpu_seconds": round(cpu, 2),
        "manager_cpu_ms_per_bd": round(1000 * cpu / len(deployments), 3),
        "manager_requests": int(requests),
        "manager_requests_per_bd": round(requests / len(deployments), 3),
        # Seconds requests waited for the client's own rate limit (the chart's --kube-api-qps).
        "manager_rate_limit_wait_seconds": round(throttled, 2),
    }
    if server_requests is not None and before is not None:
        answered = server_requests() - before
        figures["apiserver_request_total"] = int(answered)
        figures["apiserver_requests_per_bd"] = round(answered / len(deployments), 3)
    return figures


# The chart's client limits (--kube-api-qps 50, --kube-api-burst 300), and room to spare: how
# much of the cold start is the manager's own rate limit rather than its work or the server.
CLIENT_LIMITS = {
    "chart_limits": (),
    "qps_500": ("--kube-api-qps=500", "--kube-api-burst=1000"),
}


def _manager_starter(
    tenancy: Tenancy, kubeconfig: Path, workspace: str, limits: tuple[str, ...]
) -> tuple[Callable[[str], Process], list[Process]]:
    """Starts the manager with the chart's arguments on `workspace`; the list holds it."""
    args = outside_the_pod(
        tenancy.install.manager_args, {"--namespace": workspace, "--lease-namespace": workspace}
    )
    started: list[Process] = []

    def start(metrics: str) -> Process:
        process = start_bundler(
            tenancy.env.supervisor,
            f"{workspace}-manager",
            [*args, *limits, f"--metrics-addr={metrics}"],
            kubeconfig,
        )
        started.append(process)
        tenancy.ran.append(process)
        return process

    return start, started


def _runs(
    tenancy: Tenancy,
    store: KubeStore,
    kubeconfig: Path,
    make_namespace: Callable[[str], object],
    server_requests: Callable[[], float] | None,
) -> dict[str, Any]:
    """One cold start per client limit, each in a fresh workspace."""
    figures = {}
    for label, limits in CLIENT_LIMITS.items():
        workspace = f"{tenancy.workspace}-{label.replace('_', '-')}"
        make_namespace(workspace)
        start, started = _manager_starter(tenancy, kubeconfig, workspace, limits)
        try:
            figures[label] = _cold_start(
                store, workspace, tenancy.chart_base, start, server_requests
            )
        finally:
            for process in started:
                tenancy.env.supervisor.stop(process)
    return figures


@pytest.mark.timeout(3600)
def test_cold_start_figures_real_and_stand_in(tenancy: Tenancy, tmp_path: Path) -> None:
    tenancy.publish("1.0.0")
    management = tenancy.management
    real_store = KubeStore.from_kubeconfig(management.admin_kubeconfig)
    try:
        real = _runs(
            tenancy,
            real_store,
            management.service_account_kubeconfig(
                tenancy.install.manager_account, MANAGER_NAMESPACE
            ),
            lambda namespace: management.kubectl("create", "namespace", namespace),
            lambda: counter_total(management.raw("/metrics"), "apiserver_request"),
        )
    finally:
        real_store.close()

    with ApiServer() as stand_in:
        admin = KubeStore.from_kubeconfig(stand_in.kubeconfig(tmp_path / "admin.kubeconfig"))
        try:
            beside = _runs(
                tenancy,
                admin,
                manager_kubeconfig(stand_in, tmp_path),
                lambda namespace: stand_in.store.create(
                    NAMESPACE, {"metadata": {"name": namespace}}
                ),
                None,
            )
        finally:
            admin.close()
    record("cold_start_200x10", {"real_kube_apiserver": real, "stand_in": beside})
    print(f"\ncold start {CLUSTERS} x {BUNDLES}: real {real}\n  stand-in {beside}")
