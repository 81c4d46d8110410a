"""`python -m bundler.sim.bench_planning` (`make bench`): planning per BundleDeployment, values
rendered in this process and through the pool of bounded template workers.

Two fleets: the scale bench's (every Bundle reads one label, so a thousand clusters render three
times; planned with plan_bundle, as `bundler render` does) and a realistic one
(bundler.sim.realistic: per-cluster hosts and IDs, overrides, groups, lists turned into maps;
planned as the manager plans, rows memoised per Bundle and rendered in one batch per pass). Each is
planned with fresh memos `--repeat` times; the row is the median by CPU. Beside the CPU of this
process, the CPU the pool's workers used, and wall time, all per BundleDeployment. The pool's
workers are started before measuring (once per process: reported apart). The machine is shared:
its load is printed with the figures. Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bundler.api.cluster import Cluster, ClusterGroup
from bundler.core.planning import plan_bundle
from bundler.core.planning.inputs import PassInputs
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.manager.memo.rows import RowMemo
from bundler.manager.observed.indexes import Memberships, labels_fingerprint
from bundler.sim.generated import DEFAULT_WORKSPACE, generated_clusters
from bundler.sim.realistic import realistic_bundles, realistic_clusters, realistic_groups
from bundler.sim.shapes import scale_bundle
from bundler.templating_pool import TemplatePool


@dataclass(frozen=True)
class Figure:
    """One way of planning one fleet, per BundleDeployment."""

    what: str
    deployments: int
    cpu_us: float
    worker_cpu_us: float
    wall_us: float

    @property
    def total_cpu_us(self) -> float:
        return self.cpu_us + self.worker_cpu_us


def scale_fleet(templater: Templater, bundles: int, clusters: int) -> int:
    """The scale bench's Bundles planned over its fleet with plan_bundle: BundleDeployments."""
    fleet = generated_clusters(clusters, DEFAULT_WORKSPACE, seed=1)
    plans = [
        plan_bundle(scale_bundle(f"scale-{i + 1}"), fleet, [], templater=templater)
        for i in range(bundles)
    ]
    return sum(len(plan.deployments) for plan in plans)


def realistic_fleet(templater: Templater, bundles: int, clusters: int) -> int:
    """The realistic fleet planned as the manager plans a cold start: BundleDeployments."""
    fleet = realistic_clusters(clusters)
    groups = realistic_groups()
    memo = RowMemo(templater)
    planned = 0
    for bundle in realistic_bundles(bundles):
        decided = memo.decide(bundle, fleet, groups, _memberships(groups))
        rows = memo.render(bundle, decided, PassInputs())
        planned += sum(1 for row in rows.rows if row.planned is not None)
    return planned


def _memberships(groups: list[ClusterGroup]) -> Callable[[Cluster], Memberships]:
    """The groups of a cluster, as the manager's scope tells them (group names and labels)."""

    def memberships(cluster: Cluster) -> Memberships:
        env = cluster.metadata.labels.get("env")
        return tuple(
            (g.metadata.name, labels_fingerprint(g.metadata.labels))
            for g in groups
            if g.metadata.labels.get("env") == env
        )

    return memberships


def measure(
    what: str,
    plan: Callable[[Templater, int, int], int],
    templater: Templater,
    pool: TemplatePool | None,
    size: tuple[int, int],
    repeat: int,
) -> Figure:
    runs = []
    for _ in range(repeat):
        workers = pool.cpu_seconds() if pool is not None else 0.0
        wall, cpu = time.perf_counter(), time.process_time()
        deployments = plan(templater, *size)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        workers = (pool.cpu_seconds() - workers) if pool is not None else 0.0
        per = 1e6 / max(deployments, 1)
        runs.append(Figure(what, deployments, cpu * per, workers * per, wall * per))
    return sorted(runs, key=lambda f: f.total_cpu_us)[len(runs) // 2]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bundler.sim.bench_planning")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (the median is shown)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the fleets")
    args = parser.parse_args(argv)
    scale, realistic = ((100, 1000), (20, 1000)) if not args.quick else ((10, 100), (4, 200))
    pool = TemplatePool()
    try:
        started = time.perf_counter()
        pool.start()
        start_s = time.perf_counter() - started
        rows = [
            measure("scale fleet, in process", scale_fleet, IN_PROCESS, None, scale, args.repeat),
            measure("scale fleet, template pool", scale_fleet, pool, pool, scale, args.repeat),
            measure(
                "realistic fleet, in process",
                realistic_fleet,
                IN_PROCESS,
                None,
                realistic,
                args.repeat,
            ),
            measure(
                "realistic fleet, template pool",
                realistic_fleet,
                pool,
                pool,
                realistic,
                args.repeat,
            ),
        ]
    finally:
        pool.close()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"planning per BundleDeployment (median of {args.repeat}; load average {load}):")
    print(f"  scale fleet {scale[0]} bundles x {scale[1]} clusters,")
    print(f"  realistic fleet {realistic[0]} bundles x {realistic[1]} clusters")
    print(f"  {'':32} {'BDs':>6} {'CPU':>9} {'workers':>9} {'total':>9} {'wall':>9}  (us/BD)")
    for row in rows:
        print(
            f"  {row.what:32} {row.deployments:6d} {row.cpu_us:9.1f} {row.worker_cpu_us:9.1f}"
            f" {row.total_cpu_us:9.1f} {row.wall_us:9.1f}"
        )
    print(f"  starting the pool's workers: {start_s * 1000:.0f} ms wall, once per process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
