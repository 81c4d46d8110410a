"""A BootstrapConfig change rolls out under its rollout strategy
(bundler.manager.controllers.bootstrap_rollout): with maxUnavailable 1, one cluster's Flux is
upgraded at a time, the next once it is Ready again. In memory, with a manual clock: the simulated
Flux takes DELAY clock seconds per Helm action."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.api.resources import BOOTSTRAP_CONFIG, CLUSTER, SECRET
from tests.support.capi.capi_objects import kubeconfig_secret
from tests.support.manager.bootstrap_rollout import CLUSTERS, DELAY, WS, World, config


@pytest.fixture
def world() -> Iterator[World]:
    built = World()
    built.store.create(BOOTSTRAP_CONFIG, config("2.0.0"))
    for name in CLUSTERS:
        built.store.create(SECRET, kubeconfig_secret(name, WS))
        spec = {"kubeConfigSecret": f"{name}-kubeconfig", "bootstrap": {"enabled": True}}
        built.store.create(CLUSTER, {"metadata": {"name": name, "namespace": WS}, "spec": spec})
    built.start()
    yield built
    built.stop()


def test_an_upgrade_reaches_one_cluster_at_a_time_with_max_unavailable_one(world: World) -> None:
    world.advance(DELAY + 1)
    assert world.versions() == ["2.0.0"] * 3  # new clusters are never held
    live = world.store.get(BOOTSTRAP_CONFIG, "default", WS)
    live["spec"]["flux"]["version"] = "2.1.0"
    world.store.update(BOOTSTRAP_CONFIG, live)
    world.settle()
    assert sorted(world.versions()) == ["2.0.0", "2.0.0", "2.1.0"]
    world.advance(DELAY + 1)
    world.advance(5.0)  # the held ones ask again
    assert sorted(world.versions()) == ["2.0.0", "2.1.0", "2.1.0"]
    for _ in range(3):
        world.advance(DELAY + 1)
        world.advance(5.0)
    assert world.versions() == ["2.1.0"] * 3
