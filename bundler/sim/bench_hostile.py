"""`python -m bundler.sim.bench_hostile` (`make bench`): hostile Bundles through the manager.

A manager (in memory, as the cold-start bench runs it) plans a fleet of generated clusters with
the scale bench's ten ordinary Bundles, alone and then beside hostile Bundles that each read the
cluster's name (so nothing is shared between clusters: every cluster pays) and then do the worst
bundler.sim.bench_limits found: hold 95 MB, run the slowest filter until the step budget stops it,
write 1 MB of values per cluster. Each run is a fresh process (its peak RSS is its own, the
in-memory store standing for the API server included). Printed per run: time until idle, the
manager's CPU and the template workers' (per hostile render), the manager's peak RSS beside the
chart's limit, the workers' peak RSS, the clusters each hostile Bundle could not render and why.
`--template-memory` lower than what a hostile Bundle holds shows the OS bound at work. Figures
only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.collector import tune_collector
from bundler.sim.bench import every_cluster_bundle
from bundler.sim.bench_limits import worst_render
from bundler.sim.generated import DEFAULT_WORKSPACE, generated_clusters
from bundler.sim.shapes import scale_bundle
from bundler.store.memory import MemoryStore
from bundler.templating_pool import TemplateLimits, shared_pool

CHART_LIMIT_MIB = 1024
IDLE_TIMEOUT = 1800.0
NAME = "${ cluster.name }"

#: name -> values: each reads the cluster's name, then does its worst.
HOSTILE = {
    "hostile-memory": NAME + "".join(f"${{% set a{i} = 'x' * 1000000 %}}" for i in range(95)),
    "hostile-cpu": NAME + worst_render("s | list | map('upper') | list", 10_000),
    "hostile-output": "${ cluster.name ~ ('x' * 1000000) }",
}


@dataclass(frozen=True)
class Run:
    hostile: tuple[str, ...]
    clusters: int
    deployments: int
    wall: float
    manager_cpu: float
    worker_cpu: float
    manager_peak_mib: float
    worker_peak_mib: float
    errors: dict[str, int]
    stopped: dict[str, int]


def run(clusters: int, hostile: tuple[str, ...], limits: TemplateLimits) -> Run:
    """One manager over the fleet until it is idle (in this process)."""
    tune_collector()
    store = MemoryStore(require_namespaces=True)
    store.create(NAMESPACE, {"metadata": {"name": DEFAULT_WORKSPACE}})
    for cluster in generated_clusters(clusters, DEFAULT_WORKSPACE, seed=1):
        store.create(CLUSTER, cluster.to_wire())
    bundles = [scale_bundle(f"scale-{i + 1}") for i in range(10)]
    bundles += [every_cluster_bundle(name, {"v": HOSTILE[name]}) for name in hostile]
    for bundle in bundles:
        store.create(BUNDLE, bundle.to_wire())
    pool = shared_pool(limits)
    pool.start()
    manager = Manager(store, ManagerOptions(workers=4, template_limits=limits))
    stopped = Counter(pool.stopped)  # the pool is the process's: count only this run's
    worker_cpu, cpu, wall = pool.cpu_seconds(), time.process_time(), time.perf_counter()
    try:
        manager.start()
        if not manager.wait_idle(IDLE_TIMEOUT):
            raise SystemExit(f"bench: the manager was not idle within {IDLE_TIMEOUT:g}s")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        worker_cpu = pool.cpu_seconds() - worker_cpu
        errors = manager.ctx.memo.template_errors()
    finally:
        manager.stop()
    return Run(
        hostile,
        clusters,
        len(store.list(BUNDLE_DEPLOYMENT).items),
        wall,
        cpu,
        worker_cpu,
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        pool.peak_rss_mib(),
        errors,
        dict(Counter(pool.stopped) - stopped),
    )


def in_child(clusters: int, hostile: tuple[str, ...], limits: TemplateLimits) -> Run:
    with multiprocessing.get_context("spawn").Pool(1) as child:
        return child.apply(run, (clusters, hostile, limits))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bundler.sim.bench_hostile")
    parser.add_argument("--clusters", type=int, default=100, help="clusters in the fleet")
    parser.add_argument("--template-memory", type=int, default=TemplateLimits().memory_mib)
    parser.add_argument("--template-timeout", type=float, default=TemplateLimits().timeout_s)
    parser.add_argument(
        "--hostile", action="append", choices=list(HOSTILE), help="only these (repeatable)"
    )
    args = parser.parse_args(argv)
    chosen = tuple(args.hostile or HOSTILE)
    limits = TemplateLimits(memory_mib=args.template_memory, timeout_s=args.template_timeout)
    print(
        f"the manager over {args.clusters} clusters, 10 ordinary Bundles, with and without"
        f" {', '.join(chosen)} (--template-memory {limits.memory_mib},"
        f" --template-timeout {limits.timeout_s:g}):"
    )
    for hostile in ((), chosen):
        result = in_child(args.clusters, hostile, limits)
        renders = args.clusters * len(hostile)
        per_render = (
            f", {result.worker_cpu / renders * 1000:.0f} ms per hostile render" if renders else ""
        )
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"  {'with' if hostile else 'without'} hostile Bundles: {result.deployments} BDs,"
            f" {result.wall:.1f} s until idle, manager {result.manager_cpu:.1f} s CPU,"
            f" template workers {result.worker_cpu:.1f} s CPU{per_render}; peak RSS: manager"
            f" {result.manager_peak_mib:.0f} MiB (chart limit {CHART_LIMIT_MIB}), a worker"
            f" {result.worker_peak_mib:.0f} MiB (load {load})"
        )
        for bundle, count in sorted(result.errors.items()):
            print(f"    {bundle}: {count} clusters not rendered")
        if result.stopped:
            print(f"    stopped at an OS bound: {result.stopped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
