"""`python -m bundler.sim.bench_agent` (`make bench`): how one agent scales with the
BundleDeployments of its cluster.

For 20, 200 and 2,000 BundleDeployments on one cluster (the realistic fleet's Bundles planned for
one of its clusters, bundler.sim.realistic), each size in a fresh process, three rows:
- first sync: the agent starts with nothing deployed; every BundleDeployment gets its Flux objects
  written and its status reported;
- unchanged resync: once the simulated Flux has made every release Ready (and stopped), the
  resync period passes with nothing changed;
- one changed: one BundleDeployment's values change, as the manager writes it.
Each row gives the CPU per BundleDeployment (time.process_time: the agent and the in-memory stores
standing for both API servers, in one process; the one-changed row per changed BundleDeployment),
and the writes and requests to the management cluster and downstream (bundler.sim.counted_store:
one request per call through KubeStore). The agent runs on a manual clock whose resync is the only
timer the rows let fall due: its heartbeat stays out of them. The collector runs as the agent
command runs it (bundler.runtime.collector), and the BundleDeployments in the management store
(the API server's objects, not the agent's heap) are frozen out of it before the agent starts.
Every size runs `repeat` times; each row is the median by CPU. Figures only: nothing here asserts
a time.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from bundler.agent.agent import Agent
from bundler.agent.config import AgentConfig
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.resources import BUNDLE_DEPLOYMENT, CLUSTER
from bundler.core.content import helm_options
from bundler.core.deployment_id import deployment_id
from bundler.core.planning import plan_bundle
from bundler.runtime.clock import ManualClock
from bundler.runtime.collector import tune_collector
from bundler.runtime.host import Host
from bundler.runtime.metrics import RuntimeMetrics, controller_label
from bundler.sim.counted_store import CountedStore
from bundler.sim.helm_controller import SimulatedHelmController
from bundler.sim.realistic import realistic_bundles, realistic_clusters, realistic_groups
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

SIZES = (20, 200, 2000)
RESYNC_PERIOD = 600.0
# Longer than any run: the heartbeat (a write per interval) stays out of the rows.
HEARTBEAT_INTERVAL = 10 * 365 * 24 * 3600.0
IDLE_TIMEOUT = 1800.0
WORKERS = 2


def cluster_deployments(count: int) -> tuple[Obj, list[Obj]]:
    """One realistic Cluster and the BundleDeployments `count` realistic Bundles plan for it."""
    cluster = realistic_clusters(1)[0]
    groups = realistic_groups()
    deployments = [
        planned.to_object()
        for bundle in realistic_bundles(count)
        for planned in plan_bundle(bundle, [cluster], groups).deployments
    ]
    return cluster.to_wire(), deployments


@dataclass(frozen=True)
class Row:
    what: str
    deployments: int
    # BundleDeployments the row's work is about: all of them, or the one changed.
    worked_on: int
    wall: float
    cpu: float
    reconciles: int
    management_writes: int
    management_requests: int
    downstream_writes: int
    downstream_requests: int

    @property
    def cpu_ms_per_bd(self) -> float:
        return 1000 * self.cpu / max(self.worked_on, 1)


class AgentBench:
    """One cluster's agent on in-memory stores, with the simulated Flux on its downstream store;
    the steps of the rows, which the agent's behaviour tests take one by one."""

    def __init__(self, count: int) -> None:
        cluster, self.deployments = cluster_deployments(count)
        self.clock = ManualClock()
        memory = MemoryStore(clock=self.clock.now)
        memory.create(CLUSTER, cluster)
        for bd in self.deployments:
            memory.create(BUNDLE_DEPLOYMENT, bd)
        self.management = CountedStore(memory)
        self.downstream = CountedStore(MemoryStore(clock=self.clock.now))
        self.registry = CollectorRegistry()
        self.host = Host(
            memory, clock=self.clock, workers=WORKERS, metrics=RuntimeMetrics(self.registry)
        )
        meta = cluster["metadata"]
        self.config = AgentConfig(
            workspace=meta["namespace"],
            cluster=meta["name"],
            heartbeat_interval=HEARTBEAT_INTERVAL,
            resync_period=RESYNC_PERIOD,
        )
        self.agent = Agent(self.host, self.management, self.downstream, self.config)
        self.flux = SimulatedHelmController(
            self.host, self.downstream.inner, lambda _: (self.config.ref, {})
        )

    def rows(self) -> list[Row]:
        rows: list[Row] = []
        with self.measured("first sync", len(self.deployments), rows):
            self.start()
        self.make_ready()
        with self.measured("unchanged resync", len(self.deployments), rows):
            self.resync()
        with self.measured("one changed", 1, rows):
            self.change_one()
        self.stop()
        return rows

    # -- the steps ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the agent and let it sync (simulated Flux is not running)."""
        self.agent.start()
        self.host.start()
        self.settle()

    def make_ready(self) -> None:
        """Let the simulated Flux make every release Ready, then stop it."""
        self.flux.start()
        self.settle()
        self.flux.stop()
        self.settle()

    def resync(self) -> None:
        """Let the resync period pass."""
        self.clock.advance(RESYNC_PERIOD)
        self.settle()

    def change_one(self) -> str:
        """Change the values of the first BundleDeployment as the manager would; its name."""
        first = self.deployments[0]["metadata"]
        live = self.management.inner.get(BUNDLE_DEPLOYMENT, first["name"], first["namespace"])
        options = DeploymentOptions.model_validate(live["spec"]["options"])
        helm = helm_options(options)
        values = {**(helm.values or {}), "benchChanged": True}
        helm = helm.model_copy(update={"values": values})
        changed = options.model_copy(update={"helm": helm})
        live["spec"] = {"options": changed.to_wire(), "deploymentID": deployment_id(changed)}
        self.management.inner.update(BUNDLE_DEPLOYMENT, live)
        self.settle()
        return str(first["name"])

    def stop(self) -> None:
        self.host.stop()
        self.agent.stop()

    def reconciles(self) -> int:
        """The agent's reconciles so far, whatever their result."""
        label = controller_label(self.agent.name)
        return int(
            sum(
                sample.value
                for metric in self.registry.collect()
                if metric.name == "bundler_reconcile"
                for sample in metric.samples
                if sample.name == "bundler_reconcile_total"
                and sample.labels.get("controller") == label
            )
        )

    def settle(self) -> None:
        if not self.host.wait_idle(IDLE_TIMEOUT):
            raise SystemExit(f"bench: the agent was not idle within {IDLE_TIMEOUT:g}s")

    @contextmanager
    def measured(self, what: str, worked_on: int, into: list[Row]) -> Iterator[None]:
        self.management.reset()
        self.downstream.reset()
        reconciles = self.reconciles()
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        self.settle()
        into.append(
            Row(
                what,
                len(self.deployments),
                worked_on,
                time.perf_counter() - wall,
                time.process_time() - cpu,
                self.reconciles() - reconciles,
                self.management.writes(),
                self.management.calls(),
                self.downstream.writes(),
                self.downstream.calls(),
            )
        )


def rows_of_size(count: int) -> list[Row]:
    tune_collector()
    bench = AgentBench(count)
    gc.freeze()
    try:
        return bench.rows()
    finally:
        gc.unfreeze()


def rows_in_child(count: int) -> list[Row]:
    """`rows_of_size` in a fresh process, so that no size pays for another's garbage."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(rows_of_size, (count,))


def median_rows(runs: Sequence[Sequence[Row]]) -> list[Row]:
    """Row by row, the run whose CPU is the median (the machine is shared)."""
    return [
        sorted(same, key=lambda row: row.cpu)[len(same) // 2] for same in zip(*runs, strict=True)
    ]


def table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| agent, BDs on the cluster | row | CPU per BD | wall | reconciles "
        "| writes mgmt / downstream | requests mgmt / downstream |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        per = "per BD" if row.worked_on == row.deployments else f"per changed BD ({row.worked_on})"
        lines.append(
            f"| {row.deployments} | {row.what} | {row.cpu_ms_per_bd:.3f} ms {per} "
            f"| {row.wall:.2f} s | {row.reconciles} "
            f"| {row.management_writes} / {row.downstream_writes} "
            f"| {row.management_requests} / {row.downstream_requests} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bundler.sim.bench_agent", description=__doc__)
    parser.add_argument("--sizes", help="BundleDeployments per cluster, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (median shown)")
    parser.add_argument("--json", type=Path, default=Path("bench-agent.json"))
    args = parser.parse_args(argv)
    sizes = tuple(int(n) for n in args.sizes.split(",")) if args.sizes else SIZES
    rows: list[Row] = []
    for size in sizes:
        found = median_rows([rows_in_child(size) for _ in range(max(args.repeat, 1))])
        for row in found:
            print(f"{size} BDs, {row.what}: {row.cpu_ms_per_bd:.3f} ms CPU/BD", file=sys.stderr)
        rows.extend(found)
    print("\n".join(table(rows)))
    results: list[dict[str, Any]] = [
        {**asdict(row), "cpu_ms_per_bd": row.cpu_ms_per_bd} for row in rows
    ]
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
