"""A BootstrapConfig change rolls out under its rollout strategy
(bundler.manager.controllers.bootstrap_rollout): with maxUnavailable 1, one cluster's Flux is
upgraded at a time, the next once it is Ready again. In memory, with a manual clock: the simulated
Flux takes DELAY clock seconds per Helm action."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.api.resources import BOOTSTRAP_CONFIG, CLUSTER, HELM_RELEASE, NAMESPACE, SECRET
from bundler.core.bootstrap import Part, object_name
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.flux import FluxSettings, SimulatedFlux
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.capi.capi_objects import kubeconfig_secret

WS = "ws"
WAIT = 15.0
DELAY = 10.0
CLUSTERS = ("a", "b", "c")


class World:
    def __init__(self) -> None:
        self.clock = ManualClock()
        self.store = MemoryStore(clock=self.clock.now)
        self.store.create(NAMESPACE, {"metadata": {"name": WS}})
        self.host = Host(self.store, clock=self.clock, workers=2)
        self.flux = SimulatedFlux(
            self.host, self.store, lambda _: ("remote", {}), FluxSettings(delay=DELAY)
        )
        options = ManagerOptions(namespaces=(WS,), workers=2, bootstrap=True)
        self.manager = Manager(self.store, options, self.clock)

    def start(self) -> None:
        self.flux.start()
        self.host.start()
        self.manager.start()

    def stop(self) -> None:
        self.manager.stop(WAIT)
        self.host.stop(WAIT)
        self.flux.informer.stop()

    def settle(self) -> None:
        for _ in range(3):  # the two hosts wake each other
            assert self.manager.wait_idle(WAIT) and self.host.wait_idle(WAIT)

    def advance(self, seconds: float) -> None:
        self.settle()
        self.clock.advance(seconds)
        self.settle()

    def versions(self) -> list[str]:
        found = []
        for name in CLUSTERS:
            release = self.store.get(HELM_RELEASE, object_name(name, Part.FLUX), WS)
            found.append(release["spec"]["chart"]["spec"]["version"])
        return found


def config(version: str) -> Obj:
    chart = {"repo": "https://charts.example", "chart": "flux2", "version": version}
    return {
        "metadata": {"name": "default", "namespace": WS},
        "spec": {"flux": chart, "mode": "remote", "rolloutStrategy": {"maxUnavailable": 1}},
    }


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
