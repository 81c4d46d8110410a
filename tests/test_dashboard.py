"""The Grafana dashboard in dashboards/ asks only for metrics that bundler exports.

Every `expr` of every panel is searched for `bundler_*` metric names, and each must be a series
name of the registry after a simulated rollout (manager, agents, runtime) plus the API requests of
a KubeStore against the test API server: a renamed metric breaks this test, not the dashboard.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from bundler.api.resources import BUNDLE, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.kube.metrics import RequestMetrics
from bundler.kube.store import KubeOptions, KubeStore
from bundler.runtime.clock import ManualClock
from bundler.sim.fleet import Fleet, FleetOptions
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.sim_driver import run_until
from tests.support.manager.world import WAIT, world

DASHBOARD = Path(__file__).resolve().parents[1] / "dashboards" / "bundler.json"
METRIC_NAME = re.compile(r"\bbundler_[a-zA-Z0-9_]+")
# The series each metric type exposes, by suffix of its family name.
SERIES_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "gauge": ("",),
}


def expressions(node: Any) -> Iterator[str]:
    """Every `expr` string anywhere in the dashboard JSON."""
    if isinstance(node, dict):
        for key, child in node.items():
            if key == "expr" and isinstance(child, str):
                yield child
            else:
                yield from expressions(child)
    elif isinstance(node, list):
        for child in node:
            yield from expressions(child)


def exported_series(registry: CollectorRegistry) -> set[str]:
    names: set[str] = set()
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        names.update(family.name + suffix for suffix in SERIES_SUFFIXES.get(family.type, ("",)))
    return names


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> CollectorRegistry:
    """Metrics after a simulated rollout, and after API requests through a KubeStore."""
    found = CollectorRegistry()
    clock = ManualClock()
    inputs = world(cluster("a"), cluster("b", agentMode="remote", kubeConfigSecret="b-kubeconfig"))
    inputs.bundles.append(bundle([{"clusterSelector": {}}]))
    fleet = Fleet(inputs, FleetOptions(flux_delay=1.0), clock, found)
    fleet.start()
    try:
        run_until(fleet, clock, lambda: _ready_everywhere(fleet), "the bundle ready on a and b")
    finally:
        fleet.stop(WAIT)
    options = KubeOptions(metrics=RequestMetrics(found))
    with ApiServer() as server:
        kubeconfig = server.kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")
        with KubeStore.from_kubeconfig(kubeconfig, options=options) as store:
            store.list(NAMESPACE)
    return found


def _ready_everywhere(fleet: Fleet) -> bool:
    status = fleet.store.get(BUNDLE, "app", WS).get("status") or {}
    return (status.get("display") or {}).get("readyClusters") == "2/2"


def test_the_dashboard_is_grafana_json_with_queries() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["title"] and dashboard["panels"]
    for panel in dashboard["panels"]:
        exprs = list(expressions(panel))
        assert exprs, f"panel {panel['title']!r} has no query"
        assert all(METRIC_NAME.search(e) for e in exprs), f"panel {panel['title']!r}"


def test_every_dashboard_metric_is_exported(registry: CollectorRegistry) -> None:
    wanted = {
        name
        for e in expressions(json.loads(DASHBOARD.read_text()))
        for name in METRIC_NAME.findall(e)
    }
    exported = exported_series(registry)
    assert wanted - exported == set(), f"exported: {sorted(exported)}"
