"""Acceptance: /metrics scraped over HTTP during a simulated rollout shows the fleet moving.

The whole fleet (manager, agents, simulated Flux) runs in-process on a ManualClock and exports to
one registry, served by the same endpoint server `bundler manager` uses; each scrape is parsed with
prometheus_client's own text parser.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from bundler.api.resources import BUNDLE
from bundler.observe.endpoints import Address, EndpointServer, metrics_route
from bundler.runtime.clock import ManualClock
from bundler.sim.failures import FailurePolicy
from bundler.sim.fleet import Fleet, FleetOptions
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.sim_driver import run_until, settle
from tests.support.manager.world import WAIT, world

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
# Values that render only on clusters labelled with a region.
REGIONAL = {"values": {"region": "${ cluster.labels.region }"}}


def scrape(url: str) -> Samples:
    """Every sample of one scrape, by name and labels, through prometheus_client's parser."""
    with urllib.request.urlopen(url, timeout=WAIT) as answer:
        assert answer.status == 200
        text = answer.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every series of `name` carrying `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= found)


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics_url(registry: CollectorRegistry) -> Iterator[str]:
    server = EndpointServer(Address("127.0.0.1", 0), {"/metrics": metrics_route(registry)})
    bound = server.start()
    yield f"http://127.0.0.1:{bound.port}/metrics"
    server.stop()


@pytest.fixture
def fleet(registry: CollectorRegistry, clock: ManualClock) -> Iterator[Fleet]:
    inputs = world(
        cluster("eu-1", {"region": "eu"}),
        cluster("us-1", {"region": "us"}),
        cluster("lab", {"broken": "true"}),
        bundle(ALL, name="app"),
        bundle(ALL, name="regional", helm=REGIONAL),
    )
    failures = FailurePolicy(labels={"broken": "true"})
    started = Fleet(inputs, FleetOptions(flux_delay=5.0, failures=failures), clock, registry)
    started.start()
    yield started
    started.stop(WAIT)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def settled(fleet: Fleet, clock: ManualClock) -> None:
    run_until(fleet, clock, lambda: _observed(fleet), "every Bundle's status observed", 0.0)


def _observed(fleet: Fleet) -> bool:
    for found in fleet.store.list(BUNDLE).items:
        if (found.get("status") or {}).get("observedGeneration") != 1:
            return False
    return True


def test_ready_counts_move_during_a_simulated_rollout(
    fleet: Fleet, clock: ManualClock, metrics_url: str
) -> None:
    settled(fleet, clock)
    before = scrape(metrics_url)
    app = {"namespace": WS, "bundle": "app"}
    assert value(before, "bundler_bundle_clusters_desired", **app) == 3
    assert value(before, "bundler_bundle_clusters_ready", **app) == 0
    assert value(before, "bundler_rollout_deployments_total", **app, action="created") == 3

    def app_ready_on_two() -> bool:
        display = (fleet.store.get(BUNDLE, "app", WS).get("status") or {}).get("display") or {}
        return display.get("readyClusters") == "2/3"

    run_until(fleet, clock, app_ready_on_two, "app ready on the two healthy clusters")
    settle((fleet.host, fleet.manager.host))
    after = scrape(metrics_url)

    assert value(after, "bundler_bundle_clusters_ready", **app) == 2
    assert value(after, "bundler_bundle_deployments", **app, state="Ready") == 2
    assert value(after, "bundler_bundle_deployments", **app, state="NotReady") == 1
    assert value(after, "bundler_bundle_ready", **app) == 0
    regional = {"namespace": WS, "bundle": "regional"}
    assert value(after, "bundler_bundle_template_errors", **regional) == 1, "lab has no region"
    assert value(after, "bundler_cluster_bundles_ready", namespace=WS, cluster="eu-1") == 2
    assert value(after, "bundler_cluster_ready", namespace=WS, cluster="lab") == 0
    assert value(after, "bundler_clusters_offline", namespace=WS) == 0
    # The agents: the healthy clusters' releases are ready, the lab's fail; all have Flux.
    assert total(after, "bundler_agent_releases", state="ready") == 4
    assert total(after, "bundler_agent_releases", state="not_ready") == 1
    assert total(after, "bundler_agent_flux_installed") == 3
    heartbeat = value(
        after, "bundler_agent_heartbeat_timestamp_seconds", namespace=WS, cluster="lab"
    )
    assert heartbeat > 0
    # The controllers: every stage reconciled, and the queues drained.
    assert value(after, "bundler_reconcile_total", controller="bundle", result="success") > 0
    assert total(after, "bundler_reconcile_total", controller="agent") > 0
    assert value(after, "bundler_workqueue_depth", queue="manager") == 0
    assert value(after, "bundler_leader", queue="manager") == 1
