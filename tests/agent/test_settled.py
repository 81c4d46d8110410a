"""The agent's incremental paths (bundler.agent.settled), on the realistic shape of the agent bench
(bundler.sim.bench_agent: one realistic cluster, every kind of realistic Bundle): a resync of an
unchanged cluster reconciles every BundleDeployment but writes nothing and sends no request, every
object having been read once, by the caches' lists at start; one BundleDeployment changed writes
that BundleDeployment's objects and status only. What the caches do not hold is read again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.api.resources import BUNDLE_DEPLOYMENT, SECRET
from bundler.core.labels import LABEL_BUNDLE_DEPLOYMENT
from bundler.sim.bench_agent import AgentBench
from tests.support.agent.objects import bd_object
from tests.support.agent.world import AgentWorld

# Three BundleDeployments of every kind of realistic Bundle.
SIZE = 12


@pytest.fixture
def bench() -> Iterator[AgentBench]:
    started = AgentBench(SIZE)
    started.start()
    started.make_ready()
    yield started
    started.stop()


def test_an_unchanged_resync_writes_nothing_and_reads_nothing_again(bench: AgentBench) -> None:
    stores = (bench.management, bench.downstream)
    requests = [store.calls() for store in stores]
    reconciles = bench.reconciles()
    bench.resync()
    assert bench.reconciles() - reconciles >= len(bench.deployments) == SIZE
    assert [store.calls() for store in stores] == requests
    reads = bench.management.reads_of_objects() + bench.downstream.reads_of_objects()
    listed = {(plural, name) for plural, _, name in reads}
    assert {("bundledeployments", bd["metadata"]["name"]) for bd in bench.deployments} <= listed
    assert set(reads.values()) == {1}


def test_one_changed_writes_only_its_objects_and_status(bench: AgentBench) -> None:
    bench.management.reset()
    bench.downstream.reset()
    changed = bench.change_one()
    namespace = bench.config.cluster_namespace
    assert bench.management.written() == {
        ("patch_status", BUNDLE_DEPLOYMENT.plural, namespace, changed): 1
    }
    written = bench.downstream.written()
    assert written
    for _, plural, where, name in written:
        res = next(r for r in bench.agent.caches.downstream if r.plural == plural)
        obj = bench.downstream.inner.get(res, name, where)
        assert obj["metadata"]["labels"][LABEL_BUNDLE_DEPLOYMENT] == changed


def test_credentials_rotated_on_the_management_cluster_reach_the_copy_at_the_resync(
    world: AgentWorld,
) -> None:
    secret = {
        "metadata": {"name": "creds", "namespace": world.config.cluster_namespace},
        "data": {"username": "dXNlcg==", "password": "cGFzcw=="},
    }
    world.memory.create(SECRET, secret)
    world.put_bd(bd_object(repo="oci://registry.example/charts", secret="creds"))
    world.advance(world.config.resync_period)  # settled, were the Secret in a cache
    rotated = {"username": "dXNlcg==", "password": "bmV3"}
    world.memory.patch(SECRET, "creds", {"data": rotated}, world.config.cluster_namespace)
    world.advance(world.config.resync_period)
    copied = world.get(SECRET, "app-credentials")
    assert copied is not None and copied["data"] == rotated
