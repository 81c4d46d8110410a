"""Running a simulated fleet to convergence: start it, report progress, stop it, report the end.

Converged means the fleet came to rest (see Fleet.converged), whether or not every bundle is Ready:
injected failures are results to report, not reasons to wait. A run that does not come to rest
within `timeout` clock seconds ends with what it has and `converged=False`.

With `upgrade_to`, the fleet first comes to rest on the inputs; then every Bundle's
`spec.helm.version` is set to that version (a new generation: a rollout to watch, e.g. with an
injected `--fail-version` and a Bundle's `rolloutStrategy.onFailure`) and the run goes on until it
comes to rest again. The report shows the end of the second phase.

Rollout gates are watched all along (bundler.sim.gates): the report lists what each Bundle waited
at and when; with `approve_after` the run approves waiting partitions as a user would, and does not
end while one waits for that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bundler.api.resources import BUNDLE
from bundler.inputs import World
from bundler.runtime.clock import Clock
from bundler.sim.fleet import Fleet, FleetOptions
from bundler.sim.gates import GateLog
from bundler.sim.report import FleetReport, collect, progress_line
from bundler.store.protocol import Store

DEFAULT_TIMEOUT = 60.0
PROGRESS_EVERY = 1.0
POLL_EVERY = 0.05


@dataclass(frozen=True)
class RunOptions:
    timeout: float = DEFAULT_TIMEOUT
    progress_every: float = PROGRESS_EVERY
    values_of: tuple[str, ...] = ()  # bundles ("ns/name") whose per-cluster values to report
    upgrade_to: str | None = None  # chart version every Bundle moves to once at rest
    approve_after: float | None = (
        None  # seconds a partition waits for approval before the run approves it
    )


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
    upgrade = run.upgrade_to
    gates = GateLog(run.approve_after)
    fleet.start()
    try:
        while True:
            elapsed = clock.monotonic() - start
            approving = gates.look(fleet.store, elapsed)
            if not approving and fleet.converged():
                if upgrade is None:
                    converged = True
                    break
                _upgrade(fleet.store, upgrade)
                upgrade = None
            if elapsed >= run.timeout:
                break
            if progress is not None and clock.monotonic() >= next_progress:
                progress(progress_line(fleet.store, elapsed))
                next_progress += run.progress_every
            clock.sleep(POLL_EVERY)
        elapsed = clock.monotonic() - start
        gates.look(fleet.store, elapsed)
        return collect(
            fleet.store,
            converged=converged,
            elapsed=elapsed,
            values_of=run.values_of,
            gates=gates.events,
        )
    finally:
        fleet.stop()


def _upgrade(store: Store, version: str) -> None:
    """Every Bundle's chart version set to `version`, as a user's `kubectl patch` would."""
    for bundle in store.list(BUNDLE).items:
        meta = bundle["metadata"]
        patch = {"spec": {"helm": {"version": version}}}
        store.patch(BUNDLE, meta["name"], patch, meta.get("namespace"))
