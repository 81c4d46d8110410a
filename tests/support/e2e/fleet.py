"""Rancher Fleet's controller on a test cluster, run as its Helm chart runs it, for the side-by-side
benchmark (`make bench-fleet`).

`e2e/toolchain/build.sh fleet` builds `fleetcontroller` from Fleet's Go module and keeps the CRDs
and the chart from the same module zip. The chart is rendered with Helm's engine; its RBAC, its
config ConfigMap and the fleet-controller container's environment are what the controller gets,
under a token of the chart's ServiceAccount. Fleet's agents are not run: the Bundle controller
creates BundleDeployments without them, once each Cluster has its namespace in
`status.namespace` (what `fleetcontroller agentmanagement` would set, done here directly).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler.api.resources import NAMESPACE, Resource
from bundler.store.protocol import Store
from tests.support.charts.rendering import render
from tests.support.e2e.controlplane import TestCluster
from tests.support.e2e.deployment import RBAC_KINDS
from tests.support.e2e.ports import free_port, loopback
from tests.support.e2e.processes import Process, Supervisor
from tests.support.e2e.tools import Tools

FLEET_NAMESPACE = "cattle-fleet-system"
FLEET_CLUSTER = Resource(
    "fleet.cattle.io", "v1alpha1", "Cluster", "clusters", status_subresource=True
)
FLEET_BUNDLE = Resource("fleet.cattle.io", "v1alpha1", "Bundle", "bundles", status_subresource=True)
CONTROLLER = "fleet-controller"
Obj = dict[str, Any]


@dataclass(frozen=True)
class FleetTools:
    controller: str
    crds: Path
    chart: Path


def fleet_tools(tools: Tools) -> FleetTools | None:
    """Fleet's controller, CRDs and chart, if `build.sh fleet` built them."""
    found = FleetTools(
        tools.binary("fleetcontroller"),
        tools.root / "fleet" / "crds.yaml",
        tools.root / "fleet" / "chart",
    )
    if Path(found.controller).exists() and found.crds.exists() and found.chart.exists():
        return found
    return None


def install_fleet(cluster: TestCluster, fleet: FleetTools) -> tuple[list[str], dict[str, str]]:
    """Fleet's CRDs, and its chart's RBAC and config; the fleet-controller container's args and
    environment (those with a literal value)."""
    cluster.install_crds(fleet.crds)
    objects = render(fleet.chart, {}, name="fleet", namespace=FLEET_NAMESPACE)
    cluster.kubectl("create", "namespace", FLEET_NAMESPACE, check=False)
    cluster.apply([o for o in objects if o["kind"] in RBAC_KINDS or o["kind"] == "ConfigMap"])
    container = next(
        c
        for o in objects
        if o["kind"] == "Deployment" and o["metadata"]["name"] == CONTROLLER
        for c in o["spec"]["template"]["spec"]["containers"]
        if c["name"] == CONTROLLER
    )
    environment = {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}
    environment["NAMESPACE"] = FLEET_NAMESPACE
    return [str(a) for a in container.get("args") or []], environment


def start_fleet_controller(
    supervisor: Supervisor,
    cluster: TestCluster,
    fleet: FleetTools,
    args: Sequence[str],
    environment: dict[str, str],
    name: str,
) -> Process:
    """The controller under the chart's ServiceAccount, leader election off, loopback ports."""
    kubeconfig = cluster.service_account_kubeconfig(CONTROLLER, FLEET_NAMESPACE)
    env = {
        **environment,
        "KUBECONFIG": str(kubeconfig),
        "FLEET_METRICS_BIND_ADDRESS": loopback(free_port()),
        "FLEET_HEALTHPROBE_BIND_ADDRESS": loopback(free_port()),
    }
    argv = [fleet.controller, *args, "--leader-elect=false", "--zap-log-level=info"]
    return supervisor.start(name, argv, env=env)


def fleet_world(
    workspace: str, clusters: int, bundles: int, regions: Sequence[str]
) -> tuple[list[Obj], list[Obj]]:
    """Fleet's equivalent of the bundler benchmark's fleet: labelled Clusters, Bundles with a
    region override and templated values (Fleet's `${ .ClusterLabels.x }` form)."""
    fleet_clusters = [
        {
            "apiVersion": "fleet.cattle.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {
                "name": f"c{index:04}",
                "namespace": workspace,
                "labels": {"env": "scale", "region": regions[index % len(regions)]},
            },
            "spec": {"templateValues": {"index": index, "zone": f"z{index % 7}"}},
        }
        for index in range(clusters)
    ]
    values = {
        "cluster": "${ .ClusterName }",
        "region": "${ .ClusterLabels.region }",
        "zone": "${ .ClusterValues.zone }",
    }
    fleet_bundles = [
        {
            "apiVersion": "fleet.cattle.io/v1alpha1",
            "kind": "Bundle",
            "metadata": {"name": f"b{index:02}", "namespace": workspace},
            "spec": {
                "helm": {
                    "repo": "https://charts.example.com",
                    "chart": "e2e-app",
                    "version": "1.0.0",
                    "values": {**values, "bundle": index},
                },
                "defaultNamespace": f"app-{index}",
                "targets": [
                    {
                        "clusterSelector": {"matchLabels": {"region": regions[0]}},
                        "helm": {"values": {"replicas": 3}},
                    },
                    {"clusterSelector": {"matchLabels": {"env": "scale"}}},
                ],
            },
        }
        for index in range(bundles)
    ]
    return fleet_clusters, fleet_bundles


def give_cluster_namespaces(store: Store, workspace: str, names: Sequence[str]) -> None:
    """What Fleet's agent management does for each Cluster: its namespace, named in its status."""
    for name in names:
        namespace = f"cluster-{workspace}-{name}"
        store.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": namespace}})  # fmt: skip
        store.patch_status(FLEET_CLUSTER, name, {"status": {"namespace": namespace}}, workspace)


def object_count(cluster: TestCluster, group_version: str, plural: str) -> int:
    """How many objects of a kind exist, from one list of limit 1 (remainingItemCount)."""
    answer = json.loads(cluster.raw(f"/apis/{group_version}/{plural}?limit=1"))
    items = len(answer.get("items") or [])
    return items + int((answer.get("metadata") or {}).get("remainingItemCount") or 0)
