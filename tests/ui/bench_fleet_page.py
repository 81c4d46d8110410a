"""`python -m tests.ui.bench_fleet_page` (`make bench`): how long the Fleet page of `bundler ui`
takes to render a fleet of 1000 Clusters x 20 Bundles in Debian's Chromium, and how soon a
change reaches it.

The fleet is `bundler dev`'s playground (API server, manager, simulated agents and Flux) with
generated clusters and Bundles that target every cluster; the dashboard runs beside it with the
admin's kubeconfig. Once every cell is Ready, the page is loaded RUNS times in a fresh tab: the
figure is the time from the navigation's start to the page's `fleet-rendered` mark (the HTML,
the script, the snapshot of every cell fetched and parsed, the visible rows drawn). Then one
cluster's label is changed so that a Bundle leaves it, and the time until its cell empties in
the page is measured (the watch, the model, the events' coalescing, the redraw). Figures, not
assertions: the tests never time anything.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from selenium.webdriver.remote.webdriver import WebDriver

from bundler.api.resources import BUNDLE, CLUSTER
from bundler.commands.dev import Playground
from bundler.inputs import World
from bundler.kube.store import KubeStore
from bundler.sim.bench import every_cluster_bundle
from bundler.sim.fleet import FleetOptions
from bundler.sim.generated import DEFAULT_WORKSPACE, generated_clusters
from bundler.ui.fleet_model import FleetModel
from tests.support.browser import browser_missing, chromium, screenshot
from tests.support.dashboards import running_dashboard, wait_until

RENDERED = "return performance.getEntriesByName('fleet-rendered').map((e) => e.startTime)[0]"
CELL_STATE = """
const [bundle, cluster] = arguments;
const td = document.querySelector(`td[data-bundle="${bundle}"][data-cluster="${cluster}"]`);
return td ? td.dataset.state : null;
"""
CONVERGE_SECONDS = 1800.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--bundles", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    missing = browser_missing()
    if missing is not None:
        print(f"bench_fleet_page: skipped: {missing}", file=sys.stderr)
        return 0
    clusters = generated_clusters(args.clusters, DEFAULT_WORKSPACE, seed=1)
    # The first Bundle leaves out env=dev: a label change moves a cluster out of it.
    not_dev = {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}
    bundles = [every_cluster_bundle("app-00", {}, targets=[{"clusterSelector": not_dev}])] + [
        every_cluster_bundle(f"app-{i:02d}", {"replicas": 1}) for i in range(1, args.bundles)
    ]
    world = World(clusters=clusters, bundles=bundles)
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as work:
        directory = Path(work)
        playground = Playground(world, FleetOptions(flux_delay=0.0), directory)
        started = time.monotonic()
        playground.start()
        try:
            kubeconfig = playground.server.kubeconfig(directory / "admin")
            with running_dashboard(kubeconfig) as dashboard, chromium() as browser:
                expected = _targeted(world)
                _wait_ready(dashboard.model, expected)
                print(
                    f"fleet: {args.clusters} clusters x {args.bundles} bundles, {expected} "
                    f"deployments Ready in {time.monotonic() - started:.0f}s"
                )
                figures = []
                for _ in range(args.runs):
                    browser.get("about:blank")
                    browser.get(f"{dashboard.url}/#/")
                    figures.append(wait_until(lambda: browser.execute_script(RENDERED), "mark"))
                screenshot(browser, "bench-fleet-1000x20")
                print(
                    f"Fleet page rendered (navigation start to the matrix drawn), "
                    f"{args.runs} loads: median {statistics.median(figures):.0f} ms, "
                    f"max {max(figures):.0f} ms"
                )
                print(f"live: {_live_change(browser, kubeconfig, world):.2f}s")
        finally:
            playground.stop()
    return 0


def _targeted(world: World) -> int:
    dev = sum(1 for c in world.clusters if c.metadata.labels.get("env") == "dev")
    return len(world.clusters) * len(world.bundles) - dev


def _wait_ready(model: FleetModel, expected: int) -> None:
    """Until `expected` cells are Ready (looked at every second: a snapshot is not free)."""
    deadline = time.monotonic() + CONVERGE_SECONDS
    while time.monotonic() < deadline:
        snapshot: dict[str, Any] = model.snapshot()
        ready = str(snapshot["states"].index("Ready"))
        if sum(row.count(ready) for row in snapshot["cells"]) == expected:
            return
        time.sleep(1.0)
    raise SystemExit(f"bench_fleet_page: {expected} cells not Ready within {CONVERGE_SECONDS}s")


def _live_change(browser: WebDriver, kubeconfig: Path, world: World) -> float:
    """Seconds from a label patch to the page showing the cell gone (first visible rows)."""
    target = next(c for c in world.clusters if c.metadata.labels.get("env") != "dev")
    cluster_key = f"{DEFAULT_WORKSPACE}/{target.metadata.name}"
    bundle_key = f"{DEFAULT_WORKSPACE}/app-00"
    with KubeStore.from_kubeconfig(kubeconfig) as store:
        assert store.get(BUNDLE, "app-00", DEFAULT_WORKSPACE)
        started = time.monotonic()
        patch = {"metadata": {"labels": {"env": "dev"}}}
        store.patch(CLUSTER, target.metadata.name, patch, DEFAULT_WORKSPACE)
        wait_until(
            lambda: browser.execute_script(CELL_STATE, bundle_key, cluster_key) == "",
            "the cell emptied",
        )
        return time.monotonic() - started


if __name__ == "__main__":
    sys.exit(main())
