"""`python -m bundler.sim.bench` (`make bench`): how fast a simulated fleet converges.

Builds N generated clusters and B bundles that target every cluster, runs the fleet (manager,
agents, simulated Flux with no Helm delay) until it comes to rest, and prints the figures: time to
converge, BundleDeployments per second, and what each stage costs. Then it changes every bundle's
values once and measures the roll-out of that change.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT
from bundler.inputs import World
from bundler.runtime.clock import SystemClock
from bundler.sim.fleet import Fleet, FleetOptions
from bundler.sim.generated import DEFAULT_WORKSPACE, generated_clusters

POLL_EVERY = 0.05


@dataclass(frozen=True)
class Figures:
    clusters: int
    bundles: int
    deployments: int
    seconds: float

    def line(self, what: str) -> str:
        rate = self.deployments / self.seconds if self.seconds > 0 else float("inf")
        return (
            f"{what}: {self.clusters} clusters x {self.bundles} bundles = {self.deployments} "
            f"BundleDeployments in {self.seconds:.2f}s ({rate:.0f}/s)"
        )


def bench_bundle(name: str, replicas: int) -> Bundle:
    values = {"replicas": replicas, "cluster": "${ cluster.name }"}
    return every_cluster_bundle(name, values, rolloutStrategy={"maxUnavailable": "100%"})


def every_cluster_bundle(name: str, values: dict[str, Any], **spec: Any) -> Bundle:
    """A Bundle of chart `name` with `values` that targets every cluster of the workspace."""
    return Bundle.model_validate(
        {
            "metadata": {"name": name, "namespace": DEFAULT_WORKSPACE},
            "spec": {
                "helm": {
                    "repo": "https://charts.example.com",
                    "chart": name,
                    "version": "1.0.0",
                    "values": values,
                },
                "targets": [{"clusterSelector": {}}],
                **spec,
            },
        }
    )


def wait_converged(fleet: Fleet, timeout: float) -> float:
    start = time.monotonic()
    while not fleet.converged():
        if time.monotonic() - start > timeout:
            raise SystemExit(f"bench: the fleet did not converge within {timeout:g}s")
        time.sleep(POLL_EVERY)
    return time.monotonic() - start


def run(clusters: int, bundles: int, workers: int, timeout: float) -> list[str]:
    world = World(
        bundles=[bench_bundle(f"bench-{i + 1}", 1) for i in range(bundles)],
        clusters=generated_clusters(clusters, DEFAULT_WORKSPACE, seed=1),
    )
    fleet = Fleet(
        world, FleetOptions(flux_delay=0.0, workers=workers, manager_workers=workers), SystemClock()
    )
    lines = []
    try:
        fleet.start()
        seconds = wait_converged(fleet, timeout)
        deployments = len(fleet.store.list(BUNDLE_DEPLOYMENT).items)
        lines.append(Figures(clusters, bundles, deployments, seconds).line("initial roll-out"))
        for bundle in world.bundles:
            changed = bench_bundle(bundle.metadata.name, 2).to_wire()
            live = fleet.store.get(BUNDLE, bundle.metadata.name, DEFAULT_WORKSPACE)
            fleet.store.update(BUNDLE, {**live, "spec": changed["spec"]})
        seconds = wait_converged(fleet, timeout)
        lines.append(Figures(clusters, bundles, deployments, seconds).line("values change"))
        lines.append(f"manager rows rendered: {fleet.manager.rows_rendered}")
        ready = sum(
            1
            for bd in fleet.store.list(BUNDLE_DEPLOYMENT).items
            if (bd.get("status") or {}).get("ready")
        )
        lines.append(f"ready BundleDeployments at the end: {ready}/{deployments}")
    finally:
        fleet.stop()
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bundler.sim.bench", description=__doc__)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--bundles", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    for line in run(args.clusters, args.bundles, args.workers, args.timeout):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
