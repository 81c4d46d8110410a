"""`make bench`'s template figures on tiny fleets: every row measured, no time asserted."""

from __future__ import annotations

from bundler.core.templating.templater import IN_PROCESS
from bundler.sim import bench_hostile, bench_planning
from bundler.templating_pool import TemplateLimits, TemplatePool

FLEETS = [
    ("scale", bench_planning.scale_fleet, (2, 5), 10),
    ("realistic", bench_planning.realistic_fleet, (4, 5), 20),
]


def test_planning_is_measured_in_process_and_through_the_pool() -> None:
    pool = TemplatePool()
    try:
        for what, plan, size, deployments in FLEETS:
            for templater, through in ((IN_PROCESS, None), (pool, pool)):
                figure = bench_planning.measure(what, plan, templater, through, size, 1)
                assert figure.deployments == deployments
    finally:
        pool.close()


def test_a_hostile_bundle_through_the_manager_is_measured() -> None:
    limits = TemplateLimits(memory_mib=16)
    run = bench_hostile.run(2, ("hostile-memory",), limits)
    assert run.deployments == 2 * 10
    assert run.errors == {"fleet-default/hostile-memory": 2}
    assert run.stopped == {"memory": 2}
