"""Running a simulated fleet to convergence: start it, report progress, stop it, report the end.

Converged means the fleet came to rest (see Fleet.converged), whether or not every bundle is Ready:
injected failures are results to report, not reasons to wait. A run that does not come to rest
within `timeout` clock seconds ends with what it has and `converged=False`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bundler.inputs import World
from bundler.runtime.clock import Clock
from bundler.sim.fleet import Fleet, FleetOptions
from bundler.sim.report import FleetReport, collect, progress_line

DEFAULT_TIMEOUT = 60.0
PROGRESS_EVERY = 1.0
POLL_EVERY = 0.05


@dataclass(frozen=True)
class RunOptions:
    timeout: float = DEFAULT_TIMEOUT
    progress_every: float = PROGRESS_EVERY
    values_of: tuple[str, ...] = ()  # bundles ("ns/name") whose per-cluster values to report


def run_fleet(
    world: World,
    fleet_options: FleetOptions,
    clock: Clock,
    run: RunOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> FleetReport:
    """Simulate `world` until it converges or times out; `progress` gets a line every second."""
    run = run or RunOptions()
    fleet = Fleet(world, fleet_options, clock)
    start = clock.monotonic()
    next_progress = start + run.progress_every
    converged = False
    fleet.start()
    try:
        while True:
            elapsed = clock.monotonic() - start
            if fleet.converged():
                converged = True
                break
            if elapsed >= run.timeout:
                break
            if progress is not None and clock.monotonic() >= next_progress:
                progress(progress_line(fleet.store, elapsed))
                next_progress += run.progress_every
            clock.sleep(POLL_EVERY)
        elapsed = clock.monotonic() - start
        return collect(fleet.store, converged=converged, elapsed=elapsed, values_of=run.values_of)
    finally:
        fleet.stop()
