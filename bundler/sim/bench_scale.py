"""`python -m bundler.sim.bench_scale` (`make bench`): how the manager scales, row by row.

Measures, in one run and on the same machine, every row of the scale table (README "Scale"):
the manager's cold start over N clusters x M bundles at several fleet sizes (CPU per
BundleDeployment, which stays flat when the manager is linear; each size in a fresh process, whose
peak RSS it reports; the median of `repeat` runs), one cluster's label change
(time until idle and the writes it took), pure planning beside the JSON floor (one JSON round trip
of each planned object), the memory per BundleDeployment the manager holds (tracemalloc), the HTTP
requests per BundleDeployment through the test API server (when run as bundler.commands.bench,
which may reach the API over HTTP), and the simulated fleet's
BundleDeployments per second. Prints a table, writes the figures as JSON and, with matplotlib
(the `bench` extra), draws the scale curve as a PNG. The machine is shared: CPU time
(time.process_time) and counts are the figures to compare; wall time is shown beside them.
Figures only: nothing here asserts a time.

The collector runs with the settings the manager, agent and sim commands use
(bundler.runtime.collector). In a cold start the in-memory store stands for the API server, whose
objects are not the manager's heap: they are frozen out of the collector before the manager
starts, but they still count in the peak RSS.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, CLUSTER_GROUP, NAMESPACE
from bundler.core.planning import plan_bundle
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.clock import SystemClock
from bundler.runtime.collector import tune_collector
from bundler.sim.bench import wait_converged
from bundler.sim.fleet import Fleet, FleetOptions
from bundler.sim.generated import DEFAULT_WORKSPACE
from bundler.sim.shapes import Shape, shape_world
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Store
from bundler.templating_pool import shared_pool

IDLE_TIMEOUT = 1800.0

T = TypeVar("T")

#: (clusters, bundles, workers) -> (HTTP requests per BundleDeployment, BundleDeployments) of a
#: cold start over the test API server; the simulator may not import bundler.kube, so
#: bundler.commands.bench hands it in.
RequestsPerBd = Callable[[int, int, int], tuple[float, int]]


def fill(store: Store, clusters: int, bundles: int, shape: Shape = Shape.BENCH) -> None:
    """The manager's inputs: the workspace, `clusters` Clusters, the shape's groups and
    `bundles` Bundles of `shape`."""
    world = shape_world(shape, clusters, bundles)
    store.create(NAMESPACE, {"metadata": {"name": DEFAULT_WORKSPACE}})
    for cluster in world.clusters:
        store.create(CLUSTER, cluster.to_wire())
    for group in world.groups:
        store.create(CLUSTER_GROUP, group.to_wire())
    for bundle in world.bundles:
        store.create(BUNDLE, bundle.to_wire())


def _writes(store: MemoryStore) -> int:
    """The store's resourceVersion: one per write since it was made."""
    return int(store.list(NAMESPACE).resource_version or 0)


@dataclass(frozen=True)
class Timed:
    wall: float
    cpu: float


@contextmanager
def timed(into: list[Timed]) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    into.append(Timed(time.perf_counter() - wall, time.process_time() - cpu))


def wait_idle(manager: Manager) -> None:
    if not manager.wait_idle(IDLE_TIMEOUT):
        raise SystemExit(f"bench: the manager was not idle within {IDLE_TIMEOUT:g}s")


# -- rows -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColdStart:
    clusters: int
    bundles: int
    deployments: int
    wall: float
    cpu: float
    writes: int
    # The whole process's, in-memory store (the API server's objects) included.
    peak_rss_mib: float = 0.0
    # CPU time of the template workers (bundler.templating_pool) beside the manager's.
    template_cpu: float = 0.0

    @property
    def cpu_ms_per_bd(self) -> float:
        return 1000 * self.cpu / max(self.deployments, 1)

    @property
    def bd_per_s(self) -> float:
        return self.deployments / self.wall if self.wall > 0 else 0.0


@dataclass(frozen=True)
class LabelChange:
    clusters: int
    bundles: int
    wall_ms: float
    cpu_ms: float
    writes: int


def cold_start(
    clusters: int,
    bundles: int,
    workers: int,
    then: Callable[[Manager, MemoryStore], None] | None,
    shape: Shape = Shape.BENCH,
) -> ColdStart:
    """Start a manager on a filled in-memory store and wait until it is idle."""
    store = MemoryStore(require_namespaces=True)
    fill(store, clusters, bundles, shape)
    before = _writes(store)
    spent: list[Timed] = []
    gc.freeze()
    options = ManagerOptions(workers=workers)
    pool = shared_pool(options.template_limits)
    manager = Manager(store, options)
    try:
        template_cpu = pool.cpu_seconds()
        with timed(spent):
            manager.start()
            wait_idle(manager)
        template_cpu = pool.cpu_seconds() - template_cpu
        writes = _writes(store) - before
        deployments = len(store.list(BUNDLE_DEPLOYMENT).items)
        if then is not None:
            then(manager, store)
    finally:
        manager.stop()
        gc.unfreeze()
    return ColdStart(
        clusters, bundles, deployments, spent[0].wall, spent[0].cpu, writes, 0.0, template_cpu
    )


def cold_start_row(
    clusters: int, bundles: int, workers: int, with_label_change: bool, shape: Shape = Shape.BENCH
) -> tuple[ColdStart, LabelChange | None]:
    """`cold_start` in this (fresh) process, with its peak RSS, and the label change if asked."""
    tune_collector()
    changes: list[LabelChange] = []

    def after_start(manager: Manager, store: MemoryStore) -> None:
        wall, cpu, writes = label_change(manager, store)
        changes.append(LabelChange(clusters, bundles, 1000 * wall, 1000 * cpu, writes))

    then = after_start if with_label_change else None
    start = cold_start(clusters, bundles, workers, then, shape)
    return replace(start, peak_rss_mib=peak_rss_mib()), (changes[0] if changes else None)


def peak_rss_mib() -> float:
    """This process's peak resident memory since it started its program. Linux keeps
    `ru_maxrss` across fork and exec, so a child spawned by a parent that once held more would
    report the parent's peak; the memory map's high-water mark (VmHWM) starts again at exec."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def cold_start_in_child(
    clusters: int, bundles: int, workers: int, with_label_change: bool, shape: Shape = Shape.BENCH
) -> tuple[ColdStart, LabelChange | None]:
    """`cold_start_row` in a fresh process, so that each size's peak RSS is its own."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(cold_start_row, (clusters, bundles, workers, with_label_change, shape))


def label_change(manager: Manager, store: MemoryStore) -> tuple[float, float, int]:
    """One cluster's `region` label changed: (wall s, CPU s, writes) until the manager is idle."""
    name = store.list(CLUSTER).items[0]["metadata"]["name"]
    cluster = store.get(CLUSTER, name, DEFAULT_WORKSPACE)
    cluster["metadata"]["labels"]["region"] = "moon-base"
    spent: list[Timed] = []
    before = _writes(store)
    with timed(spent):
        store.update(CLUSTER, cluster)
        time.sleep(0)  # let the informers see the event before asking whether all is idle
        wait_idle(manager)
    return spent[0].wall, spent[0].cpu, _writes(store) - before - 1


@dataclass(frozen=True)
class Planning:
    bundles: int
    clusters: int
    us_per_bd: float
    floor_us_per_bd: float
    bytes_per_bd: float

    @property
    def times_floor(self) -> float:
        return self.us_per_bd / self.floor_us_per_bd if self.floor_us_per_bd else 0.0


def planning(bundles: int, clusters: int, shape: Shape = Shape.BENCH) -> Planning:
    """CPU per planned BundleDeployment, beside one JSON round trip of each planned object.
    Bundle by Bundle, each plan dropped once measured: the heavy shape's 100,000 planned
    deployments (23 KB of JSON each) held at once took gigabytes."""
    world = shape_world(shape, clusters, bundles)
    planned: list[Timed] = []
    floor: list[Timed] = []
    count = size = 0
    for bundle in world.bundles:
        with timed(planned):
            plan = plan_bundle(bundle, world.clusters, world.groups)
        objects = [d.to_object() for d in plan.deployments]
        with timed(floor):
            sizes = [len(json.loads(json.dumps(obj)) and json.dumps(obj)) for obj in objects]
        count += len(objects)
        size += sum(sizes)
        del plan, objects
    count = max(count, 1)
    return Planning(
        bundles,
        clusters,
        1e6 * sum(t.cpu for t in planned) / count,
        # the floor round-trips twice per object above
        1e6 * sum(t.cpu for t in floor) / count / 2,
        size / count,
    )


def memory_per_bd(clusters: int, bundles: int, workers: int, shape: Shape = Shape.BENCH) -> float:
    """Bytes the manager holds per BundleDeployment: traced memory with the manager idle, less
    the same once it is stopped and dropped (the store keeps its objects)."""
    store = MemoryStore(require_namespaces=True)
    fill(store, clusters, bundles, shape)
    gc.collect()
    tracemalloc.start()
    try:
        manager = Manager(store, ManagerOptions(workers=workers))
        manager.start()
        wait_idle(manager)
        manager.stop()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        deployments = len(store.list(BUNDLE_DEPLOYMENT).items)
        del manager
        gc.collect()
        without = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (held - without) / max(deployments, 1)


@dataclass(frozen=True)
class SimRate:
    clusters: int
    bundles: int
    deployments: int
    wall: float
    cpu: float

    @property
    def bd_per_s(self) -> float:
        return self.deployments / self.wall if self.wall > 0 else 0.0


def sim_rate(clusters: int, bundles: int, workers: int) -> SimRate:
    """The whole simulated fleet (manager, agents, Flux without delay) until it is at rest."""
    world = shape_world(Shape.BENCH, clusters, bundles)
    options = FleetOptions(flux_delay=0.0, workers=workers, manager_workers=workers)
    fleet = Fleet(world, options, SystemClock())
    cpu = time.process_time()
    try:
        fleet.start()
        wall = wait_converged(fleet, IDLE_TIMEOUT)
        deployments = len(fleet.store.list(BUNDLE_DEPLOYMENT).items)
    finally:
        fleet.stop()
    return SimRate(clusters, bundles, deployments, wall, time.process_time() - cpu)


# -- the run --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    fleets: tuple[int, ...]
    bundles: int
    label_fleet: int
    planning: tuple[int, int]
    memory: tuple[int, int]
    http: tuple[int, int]
    sim_fleets: tuple[int, ...]
    sim_bundles: int
    workers: int
    # Cold starts per fleet size; the row shows the median by CPU per BD (the machine is shared).
    repeat: int = 3
    shapes: tuple[Shape, ...] = tuple(Shape)


FULL = Sizes((250, 500, 1000, 2000), 20, 1000, (100, 1000), (500, 20), (1000, 20),
             (250, 500, 1000, 2000), 2, 4)  # fmt: skip
QUICK = Sizes((50, 100, 200), 5, 200, (20, 200), (100, 5), (100, 5), (50, 100, 200), 2, 4, 1)


def measure(
    sizes: Sizes, progress: Callable[[str], None], requests: RequestsPerBd | None = None
) -> dict[str, Any]:
    tune_collector()
    results: dict[str, Any] = {
        "shapes": {shape.value: _shape_rows(sizes, shape, progress) for shape in sizes.shapes},
        "sim": [],
        "http": None,
    }
    if requests is not None:
        per_bd, deployments = requests(*sizes.http, sizes.workers)
        results["http"] = {
            "fleet": sizes.http,
            "requests_per_bd": per_bd,
            "deployments": deployments,
        }
        progress(f"HTTP: {per_bd:.2f} requests/BD")
    for size in sizes.sim_fleets:
        rate = sim_rate(size, sizes.sim_bundles, sizes.workers)
        progress(f"sim {size} x {sizes.sim_bundles}: {rate.bd_per_s:.0f} BD/s")
        results["sim"].append({**asdict(rate), "bd_per_s": rate.bd_per_s})
    return results


def _shape_rows(sizes: Sizes, shape: Shape, progress: Callable[[str], None]) -> dict[str, Any]:
    """The manager's rows on one fleet shape: cold starts, label change, planning, memory."""
    rows: dict[str, Any] = {"cold_start": []}
    label: list[LabelChange] = []
    for size in sizes.fleets:
        with_change = size == sizes.label_fleet
        runs = [
            cold_start_in_child(size, sizes.bundles, sizes.workers, with_change, shape)
            for _ in range(max(sizes.repeat, 1))
        ]
        start = _median([run for run, _ in runs], lambda run: run.cpu_ms_per_bd)
        changes = [change for _, change in runs if change is not None]
        label.extend([_median(changes, lambda change: change.wall_ms)] if changes else [])
        progress(f"[{shape}] cold start {size} x {sizes.bundles}: {start.cpu_ms_per_bd:.2f} ms/BD")
        rows["cold_start"].append({**asdict(start), "cpu_ms_per_bd": start.cpu_ms_per_bd})
    rows["label_change"] = [asdict(change) for change in label]
    plan = planning(*sizes.planning, shape)
    rows["planning"] = {**asdict(plan), "times_floor": plan.times_floor}
    progress(f"[{shape}] planning: {plan.us_per_bd:.1f} us/BD, {plan.times_floor:.1f}x floor")
    memory = memory_per_bd(*sizes.memory, sizes.workers, shape)
    rows["memory"] = {"fleet": sizes.memory, "bytes_per_bd": memory}
    progress(f"[{shape}] memory: {memory / 1024:.1f} KiB/BD")
    return rows


def _median(items: Sequence[T], by: Callable[[T], float]) -> T:
    return sorted(items, key=by)[len(items) // 2]


def table(results: dict[str, Any]) -> list[str]:
    """The figures as the rows of the README's scale table (one group of rows per shape)."""
    lines = ["| shape | what | figure |", "|---|---|---|"]
    for shape, rows in results["shapes"].items():
        lines.extend(f"| {shape} {line}" for line in _shape_lines(rows))
    if (http := results["http"]) is not None:
        lines.append(
            f"| bench | HTTP requests per BD, {http['fleet'][0]} x {http['fleet'][1]} cold start "
            f"| {http['requests_per_bd']:.2f} |"
        )
    for rate in results["sim"]:
        lines.append(
            f"| bench | sim {rate['clusters']} clusters x {rate['bundles']} bundles "
            f"| {rate['bd_per_s']:.0f} BD/s ({rate['cpu']:.1f} s CPU) |"
        )
    return lines


def _shape_lines(rows: dict[str, Any]) -> list[str]:
    lines = []
    for start in rows["cold_start"]:
        lines.append(
            f"| manager cold start, {start['clusters']} clusters x {start['bundles']} bundles "
            f"| {start['wall']:.1f} s wall, {start['cpu']:.1f} s CPU "
            f"(+ {start.get('template_cpu', 0.0):.1f} s template workers), "
            f"{start['cpu_ms_per_bd']:.2f} ms CPU per BD, {start['writes']} writes, "
            f"{start['peak_rss_mib']:.0f} MiB peak RSS |"
        )
    for change in rows["label_change"]:
        lines.append(
            f"| one cluster's label change at {change['clusters']} x {change['bundles']} "
            f"| {change['wall_ms']:.0f} ms until idle ({change['cpu_ms']:.0f} ms CPU), "
            f"{change['writes']} writes |"
        )
    plan = rows["planning"]
    lines.append(
        f"| pure planning, {plan['bundles']} bundles x {plan['clusters']} clusters "
        f"| {plan['us_per_bd']:.1f} us/BD = {plan['times_floor']:.1f}x the JSON floor "
        f"({plan['floor_us_per_bd']:.1f} us per {plan['bytes_per_bd']:.0f}-byte BD) |"
    )
    memory = rows["memory"]
    lines.append(
        f"| memory per BD held by the manager, {memory['fleet'][0]} x {memory['fleet'][1]} "
        f"| {memory['bytes_per_bd'] / 1024:.1f} KiB |"
    )
    return lines


def plot(results: dict[str, Any], path: Path) -> bool:
    """The scale curve: BD/s and CPU per BD against fleet size (False without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sims = results["sim"]
    figure, (rates, costs) = plt.subplots(1, 2, figsize=(9, 3.5))
    for shape, rows in results["shapes"].items():
        starts = rows["cold_start"]
        sizes = [s["clusters"] for s in starts]
        rates.plot(sizes, [s["deployments"] / s["wall"] for s in starts], "o-", label=shape)
        costs.plot(sizes, [s["cpu_ms_per_bd"] for s in starts], "o-", label=shape)
    rates.plot([s["clusters"] for s in sims], [s["bd_per_s"] for s in sims], "s-", label="sim")
    rates.set(xlabel="clusters", ylabel="BundleDeployments per second", ylim=(0, None))
    rates.legend()
    costs.legend()
    costs.set(xlabel="clusters", ylabel="ms CPU per BundleDeployment", ylim=(0, None))
    figure.suptitle("bundler manager: scale curve")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return True


def main(argv: Sequence[str] | None = None, requests: RequestsPerBd | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bundler.sim.bench_scale", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes: a run of a minute")
    parser.add_argument("--fleets", help="cold start fleet sizes, comma-separated")
    parser.add_argument("--sim-fleets", help="simulated fleet sizes, comma-separated")
    parser.add_argument(
        "--shapes",
        help=f"fleet shapes, comma-separated (default: {','.join(Shape)}; bundler.sim.shapes)",
    )
    parser.add_argument("--json", type=Path, default=Path("bench-results.json"))
    parser.add_argument("--png", type=Path, default=Path("bench-scale.png"))
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.fleets:
        fleets = tuple(int(n) for n in args.fleets.split(","))
        sizes = replace(sizes, fleets=fleets, label_fleet=fleets[-1])
    if args.sim_fleets:
        sizes = replace(sizes, sim_fleets=tuple(int(n) for n in args.sim_fleets.split(",")))
    if args.shapes:
        sizes = replace(sizes, shapes=tuple(Shape(name) for name in args.shapes.split(",")))
    results = measure(sizes, lambda line: print(line, file=sys.stderr, flush=True), requests)
    print("\n".join(table(results)))
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    if plot(results, args.png):
        print(f"wrote {args.json} and {args.png}")
    else:
        print(f"wrote {args.json} (no plot: install the `bench` extra for matplotlib)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
