"""A world for the bootstrap rollout tests: a few clusters and the bootstrap config of a version."""

from __future__ import annotations

from bundler.api.resources import HELM_RELEASE, NAMESPACE
from bundler.core.bootstrap import Part, object_name
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.helm_controller import FluxSettings, SimulatedHelmController
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

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
        self.flux = SimulatedHelmController(
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
