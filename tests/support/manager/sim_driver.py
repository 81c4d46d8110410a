"""Driving a simulated fleet (bundler.sim.fleet) on a ManualClock: settle every host, then move the
clock to the next timer, until a condition holds."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bundler.inputs import World
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.fleet import Fleet, FleetOptions, SimCluster
from bundler.sim.helm_controller import SimulatedHelmController

# Upper bound (real seconds) on waits for other threads; tests never assert on durations.
WAIT = 15.0


@contextmanager
def running_fleet(world: World, options: FleetOptions, clock: ManualClock) -> Iterator[Fleet]:
    """A fleet, stopped afterwards; the test starts it (after writing what it needs first)."""
    fleet = Fleet(world, options, clock)
    try:
        yield fleet
    finally:
        fleet.stop(WAIT)


def helm_controller(sim: SimCluster) -> SimulatedHelmController:
    """The simulated helm-controller among a wired cluster's simulated Flux controllers."""
    return next(c for c in sim.flux if isinstance(c, SimulatedHelmController))


def settle(hosts: tuple[Host, ...]) -> None:
    """Until no host has work queued, running or due now (work on one may wake another)."""
    deadline = time.monotonic() + WAIT
    while not all(host.is_idle() for host in hosts):
        for host in hosts:
            assert host.wait_idle(WAIT), f"host {host.name} did not settle"
        assert time.monotonic() < deadline, "the fleet did not settle"


def run_until(
    fleet: Fleet, clock: ManualClock, done: Callable[[], bool], what: str, limit: float = 3600.0
) -> None:
    """Let clock time pass, timer by timer, until `done()`; fail naming `what` after `limit`."""
    hosts = (fleet.host, fleet.manager.host)
    end = clock.monotonic() + limit
    while True:
        settle(hosts)
        if done():
            return
        dues = [due for host in hosts if (due := host.timers.next_due()) is not None]
        if not dues or min(dues) > end:
            raise AssertionError(f"{what}: not reached within {limit:g} clock seconds")
        clock.advance(max(0.0, min(dues) - clock.monotonic()))
