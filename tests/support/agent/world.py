"""An agent's world for the agent tests: a management store, a downstream cluster's store and the
agent between them (AgentWorld), with the bounds its tests wait within."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bundler.agent.agent import Agent
from bundler.agent.config import AgentConfig
from bundler.api.resources import (
    ALL_KINDS,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    FLUX_KINDS,
    HELM_RELEASE,
    SECRET,
    Resource,
)
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.helm_controller import FluxSettings, SimulatedHelmController
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj, Store
from tests.support.agent.objects import CLUSTER_NAME
from tests.support.builders import WS, cluster
from tests.support.schemas import validate

# Upper bound (real seconds) on waits for other threads; tests never assert on durations.
WAIT = 15.0
AGENT_NAMESPACE = "bundler-system"
DOWNSTREAM_KINDS = (SECRET, *FLUX_KINDS)


class AgentWorld:
    def __init__(
        self,
        clock: ManualClock,
        *,
        flux: bool = True,
        memory: MemoryStore | None = None,
        downstream: MemoryStore | None = None,
        management: Store | None = None,
        settings: FluxSettings | None = None,
        unserved: tuple[Resource, ...] = (),
    ) -> None:
        """`memory`/`downstream`: reuse another world's stores (a restarted agent); `management`:
        what the agent talks to instead of `memory` (e.g. a store that fails on purpose);
        `unserved`: kinds the downstream cluster does not serve (a controller not installed)."""
        self.clock = clock
        self.memory = memory or MemoryStore(clock=clock.now)
        self.management: Store = management or self.memory
        served = [k for k in ALL_KINDS if (flux or k not in FLUX_KINDS) and k not in unserved]
        self.downstream = downstream or MemoryStore(clock=clock.now, served=served)
        self.host = Host(self.memory, clock=clock, workers=2, backoff_cap=5.0)
        self.config = AgentConfig(workspace=WS, cluster=CLUSTER_NAME)
        self.agent = Agent(self.host, self.management, self.downstream, self.config)
        self.flux = (
            SimulatedHelmController(
                self.host, self.downstream, lambda _: (self.config.ref, {}), settings
            )
            if flux
            else None
        )
        if memory is None:
            self.memory.create(CLUSTER, cluster(CLUSTER_NAME).to_wire())

    def start(self) -> None:
        self.agent.start()
        if self.flux is not None:
            self.flux.start()
        self.host.start()
        self.settle()

    def stop(self) -> None:
        self.host.stop(WAIT)
        self.agent.caches.stop()

    def settle(self) -> None:
        assert self.host.wait_idle(WAIT), "the host did not settle"

    def advance(self, seconds: float) -> None:
        """Let `seconds` of clock time pass, settling after every timer that falls due."""
        end = self.clock.monotonic() + seconds
        while True:
            self.settle()
            due = self.host.timers.next_due()
            if due is None or due > end:
                break
            self.clock.advance(max(0.0, due - self.clock.monotonic()))
        self.clock.advance(max(0.0, end - self.clock.monotonic()))
        self.settle()

    # -- writes and reads -----------------------------------------------------------------------

    def put_bd(self, obj: Obj) -> None:
        """Create the BundleDeployment, or replace its spec as the manager would."""
        meta = obj["metadata"]
        try:
            live = self.memory.get(BUNDLE_DEPLOYMENT, meta["name"], meta["namespace"])
        except NotFound:
            self.memory.create(BUNDLE_DEPLOYMENT, obj)
        else:
            self.memory.update(BUNDLE_DEPLOYMENT, {**live, "spec": obj["spec"]})
        self.settle()

    def delete_bd(self, obj: Obj) -> None:
        meta = obj["metadata"]
        self.memory.delete(BUNDLE_DEPLOYMENT, meta["name"], meta["namespace"])
        self.settle()

    def bd(self, name: str = "app") -> Obj:
        return self.memory.get(BUNDLE_DEPLOYMENT, name, self.config.cluster_namespace)

    def condition(self, name: str, type: str) -> dict[str, Any]:
        conditions = (self.bd(name).get("status") or {}).get("conditions") or []
        return next(c for c in conditions if c["type"] == type)

    def release(self, name: str = "app") -> Obj | None:
        return self.get(HELM_RELEASE, name)

    def get(self, res: Resource, name: str) -> Obj | None:
        try:
            found = self.downstream.get(res, name, AGENT_NAMESPACE)
        except NotFound:
            return None
        if res in FLUX_KINDS:
            validate(found)
        return found

    def downstream_objects(self) -> list[tuple[str, str]]:
        """(kind, name) of everything in the agent namespace; every Flux object is validated."""
        found = []
        for res in DOWNSTREAM_KINDS:
            for obj in self.downstream.list(res, AGENT_NAMESPACE).items:
                if res in FLUX_KINDS:
                    validate(obj)
                found.append((obj["kind"], obj["metadata"]["name"]))
        return sorted(found)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


WorldFactory = Callable[..., AgentWorld]


@pytest.fixture
def make_world(clock: ManualClock) -> Iterator[WorldFactory]:
    made: list[AgentWorld] = []

    def make(**kwargs: Any) -> AgentWorld:
        world = AgentWorld(clock, **kwargs)
        made.append(world)
        return world

    yield make
    for world in made:
        world.stop()


@pytest.fixture
def world(make_world: WorldFactory) -> AgentWorld:
    started = make_world()
    started.start()
    return started
