"""bundler.sim.controllers: every delivery has the simulated Flux controller that serves its kinds,
and a simulated store gets one of each."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.core.delivery.helm import HELM
from bundler.core.delivery.registry import DELIVERIES
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.controllers import SIMULATED_CONTROLLERS, simulated_flux
from bundler.sim.helm_controller import FluxSettings, SimulatedHelmController
from bundler.store.memory import MemoryStore

WAIT = 15.0


@pytest.fixture
def host() -> Iterator[Host]:
    clock = ManualClock()
    host = Host(MemoryStore(clock=clock.now), clock=clock, workers=1)
    yield host
    host.stop(WAIT)


def test_every_delivery_has_a_simulated_controller() -> None:
    assert DELIVERIES
    assert set(SIMULATED_CONTROLLERS) == {delivery.name for delivery in DELIVERIES}


def test_a_store_gets_the_controller_of_each_delivery(host: Host) -> None:
    made = simulated_flux(host, host.store, lambda _: ("ws/c1", {}), FluxSettings(), "flux:c1")
    assert len(made) == len(DELIVERIES)
    helm = [c.name for c in made if isinstance(c, SimulatedHelmController)]
    assert helm == [f"flux:c1:{HELM.name}"]
    assert not any(c.busy() for c in made)
