"""`make bench-fleet`: Rancher Fleet's controller and bundler's manager side by side, on the same
build of the real kube-apiserver (a fresh one per run, so counts and metrics are the run's own).

Equivalent fleets: N Clusters with labels and template values, M Bundles with a region override
and values read from the cluster's name, labels and values, targeting every cluster. Neither runs
agents: Fleet's Bundle controller and bundler's manager both create BundleDeployments without
them. Each controller runs as its chart runs it (RBAC, arguments, environment), and is measured
from its start until every BundleDeployment exists: wall time, CPU and peak RSS of its process
tree (bundler's template workers included), and the API server's `apiserver_request_total` over
the window. bundler runs twice: with its chart's client limits, and with room (--kube-api-qps 500);
Fleet's chart sets none (controller-runtime's defaults).

Writes build/bench-fleet.json and prints a table. Needs `e2e/toolchain/build.sh fleet`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bundler.api.resources import BUNDLE, CLUSTER, NAMESPACE
from bundler.kube.store import KubeStore
from tests.support.e2e.controlplane import TestCluster, start_cluster, start_etcd
from tests.support.e2e.deployment import (
    MANAGER_NAMESPACE,
    ManagerInstall,
    install_manager_chart,
    outside_the_pod,
    start_bundler,
)
from tests.support.e2e.environment import ROOT
from tests.support.e2e.figures import counter_total, tree_cpu_seconds, tree_peak_rss_mib
from tests.support.e2e.fleet import (
    FLEET_BUNDLE,
    FLEET_CLUSTER,
    FleetTools,
    fleet_tools,
    fleet_world,
    give_cluster_namespaces,
    install_fleet,
    object_count,
    start_fleet_controller,
)
from tests.support.e2e.processes import Process, Supervisor, wait_until
from tests.support.e2e.tools import Tools, tools_root

SIZES = ((200, 10), (1000, 20))
REGIONS = ("eu", "us", "ap", "sa")
WORKSPACE = "fleet-default"
PATIENCE_S = 3600.0
RESULTS = ROOT / "build" / "bench-fleet.json"
BUNDLER_LIMITS = {
    "bundler (chart limits)": (),
    "bundler (qps 500)": ("--kube-api-qps=500", "--kube-api-burst=1000"),
}


def _bundler_world(
    clusters: int, bundles: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """bundler's side of the same fleet: the Fleet objects, in bundler's spellings."""
    fleet_clusters, fleet_bundles = fleet_world(WORKSPACE, clusters, bundles, REGIONS)
    ours_clusters = [
        {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Cluster",
            "metadata": c["metadata"],
            "spec": {"values": c["spec"]["templateValues"]},
        }
        for c in fleet_clusters
    ]
    ours_bundles = []
    for b in fleet_bundles:
        spec = b["spec"]
        helm = dict(spec["helm"])
        helm["values"] = {
            "cluster": "${ cluster.name }",
            "region": "${ cluster.labels.region }",
            "zone": "${ cluster.values.zone }",
            "bundle": helm["values"]["bundle"],
        }
        ours_bundles.append(
            {
                "apiVersion": "bundler.dev/v1alpha1",
                "kind": "Bundle",
                "metadata": b["metadata"],
                "spec": {"helm": helm, "namespace": spec["defaultNamespace"],
                         "targets": spec["targets"]},
            }
        )  # fmt: skip
    return ours_clusters, ours_bundles


def _measure(
    cluster: TestCluster,
    start: Callable[[], Process],
    count: Callable[[], int],
    expected: int,
    supervisor: Supervisor,
) -> dict[str, Any]:
    before = counter_total(cluster.raw("/metrics"), "apiserver_request")
    started = time.monotonic()
    process = start()
    assert process.popen is not None
    peak = 0.0

    def done() -> bool:
        nonlocal peak
        peak = max(peak, tree_peak_rss_mib(process.popen.pid))  # type: ignore[union-attr]
        return count() >= expected

    wait_until(done, f"{expected} BundleDeployments", timeout=PATIENCE_S, supervisor=supervisor,
               interval=0.5)  # fmt: skip
    wall = time.monotonic() - started
    cpu = tree_cpu_seconds(process.popen.pid)
    requests = counter_total(cluster.raw("/metrics"), "apiserver_request") - before
    supervisor.stop(process)
    return {
        "bundle_deployments": expected,
        "seconds_until_all_exist": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "peak_rss_mib": round(peak, 1),
        "apiserver_requests": int(requests),
        "apiserver_requests_per_bd": round(requests / expected, 2),
    }


def _fleet_run(
    supervisor: Supervisor, cluster: TestCluster, fleet: FleetTools, clusters: int, bundles: int
) -> dict[str, Any]:
    args, environment = install_fleet(cluster, fleet)
    store = KubeStore.from_kubeconfig(cluster.admin_kubeconfig)
    try:
        store.create(NAMESPACE, {"metadata": {"name": WORKSPACE}})
        fleet_clusters, fleet_bundles = fleet_world(WORKSPACE, clusters, bundles, REGIONS)
        for obj in fleet_clusters:
            store.create(FLEET_CLUSTER, obj)
        give_cluster_namespaces(store, WORKSPACE, [c["metadata"]["name"] for c in fleet_clusters])
        for obj in fleet_bundles:
            store.create(FLEET_BUNDLE, obj)
    finally:
        store.close()
    return _measure(
        cluster,
        lambda: start_fleet_controller(
            supervisor, cluster, fleet, args, environment, f"{cluster.name}-fleetcontroller"
        ),
        lambda: object_count(cluster, "fleet.cattle.io/v1alpha1", "bundledeployments"),
        clusters * bundles,
        supervisor,
    )


def _bundler_run(
    supervisor: Supervisor,
    cluster: TestCluster,
    clusters: int,
    bundles: int,
    limits: tuple[str, ...],
) -> dict[str, Any]:
    cluster.install_crds(*sorted((ROOT / "crds").glob("*.yaml")))
    install: ManagerInstall = install_manager_chart(cluster)
    store = KubeStore.from_kubeconfig(cluster.admin_kubeconfig)
    try:
        store.create(NAMESPACE, {"metadata": {"name": WORKSPACE}})
        ours_clusters, ours_bundles = _bundler_world(clusters, bundles)
        for obj in ours_clusters:
            store.create(CLUSTER, obj)
        for obj in ours_bundles:
            store.create(BUNDLE, obj)
    finally:
        store.close()
    kubeconfig = cluster.service_account_kubeconfig(install.manager_account, MANAGER_NAMESPACE)
    args = outside_the_pod(
        install.manager_args, {"--namespace": WORKSPACE, "--lease-namespace": WORKSPACE}
    )
    return _measure(
        cluster,
        lambda: start_bundler(supervisor, f"{cluster.name}-manager", [*args, *limits], kubeconfig),
        lambda: object_count(cluster, "bundler.dev/v1alpha1", "bundledeployments"),
        clusters * bundles,
        supervisor,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(f"{n}x{m}" for n, m in SIZES),
                        help="comma-separated CLUSTERSxBUNDLES (default: %(default)s)")  # fmt: skip
    parsed = parser.parse_args(argv)
    sizes = [tuple(int(x) for x in size.split("x")) for size in parsed.sizes.split(",")]
    tools = Tools(tools_root())
    fleet = fleet_tools(tools)
    if fleet is None:
        print("bench-fleet: Fleet's controller is not built: run e2e/toolchain/build.sh fleet",
              file=sys.stderr)  # fmt: skip
        return 2
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        workdir = Path(tmp)
        supervisor = Supervisor(workdir / "logs")
        try:
            etcd = start_etcd(supervisor, tools, workdir)
            for clusters, bundles in sizes:
                row: dict[str, Any] = {}
                label = f"{clusters}x{bundles}"
                fresh = start_cluster(supervisor, tools, etcd, workdir, f"fleet-{label}")
                row["fleet"] = _fleet_run(supervisor, fresh, fleet, clusters, bundles)
                print(f"{label} fleet: {row['fleet']}", flush=True)
                for name, limits in BUNDLER_LIMITS.items():
                    slug = "q" if limits else "c"
                    fresh = start_cluster(
                        supervisor, tools, etcd, workdir, f"bundler-{slug}-{label}"
                    )
                    row[name] = _bundler_run(supervisor, fresh, clusters, bundles, limits)
                    print(f"{label} {name}: {row[name]}", flush=True)
                results[label] = row
        finally:
            supervisor.stop_all()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
