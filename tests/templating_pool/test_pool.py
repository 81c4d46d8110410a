"""The pool of template workers: it answers as rendering in process does, a render that hits a
bound the OS enforces is that cluster's TemplateLimitExceeded (naming the Bundle, the path and the
limit) while the rest of its batch goes on, and a worker never outlives its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bundler.core.templating.images import ImageNotResolvedError, UnresolvedImage
from bundler.core.templating.templater import IN_PROCESS, RenderAnswer, RenderCall
from bundler.errors import TemplateError, TemplateLimitExceeded
from bundler.templating_pool import TemplateLimits, TemplatePool
from tests.support.templating_pool.hostile import BUSY, HOLDS_40_MB, SLOW, call, context

WAIT = 30.0
#: Busy renders in a batch signalled midway: a couple of seconds of work.
BATCH = 200


@pytest.fixture
def make_pool() -> Iterator[Any]:
    """Pools that are always closed."""
    pools: list[TemplatePool] = []

    def make(**limits: Any) -> TemplatePool:
        pool = TemplatePool(TemplateLimits(**limits))
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.close()


def comparable(answer: RenderAnswer) -> object:
    if isinstance(answer, TemplateError):
        return type(answer).__name__, str(answer)
    return answer


SAME_AS_IN_PROCESS = [
    ("text", {"host": "${ cluster.name }.${ cluster.labels.region }.example.com"}),
    ("native-types", {"n": "${ cluster.values.replicas + 1 }", "l": "${ [1, none, true] }"}),
    ("keys", {"${ cluster.name }": {"nested": ["${ cluster.labels | tojson }"]}}),
    ("missing-name", {"x": "${ cluster.values.nope }"}),
    ("syntax-error", {"x": "${ (( }"}),
    ("budget", {"x": "${% for i in range(200000) %}x${% endfor %}"}),
    ("unicode", {"x": "é ${ '∑' * 3 } \U0001f600"}),
    ("long-integer-text", {"x": "n=${ 2 ** 100 }"}),
    ("plain", {"a": 1, "b": [1.5, None, True], "c": {"d": "no template"}}),
]


@pytest.mark.parametrize(
    "values", [c[1] for c in SAME_AS_IN_PROCESS], ids=[c[0] for c in SAME_AS_IN_PROCESS]
)
def test_answers_as_rendering_in_process(make_pool: Any, values: dict[str, Any]) -> None:
    calls = [RenderCall({"values": values}, context(f"c{i}")) for i in range(3)]
    expected = [comparable(a) for a in IN_PROCESS.render(calls)]
    assert [comparable(a) for a in make_pool().render(calls)] == expected


def test_an_unresolved_image_holds_its_cluster_as_in_process(make_pool: Any) -> None:
    ctx = context("c")
    ctx = type(ctx)(**{**ctx.__dict__, "images": {"web": UnresolvedImage("NoMatch", "no tag")}})
    (answer,) = make_pool().render([RenderCall({"values": {"v": "${ images.web.tag }"}}, ctx)])
    assert isinstance(answer, ImageNotResolvedError)
    assert (answer.image, answer.reason, answer.field) == ("web", "NoMatch", "values.v")


def test_what_templates_read_is_asked_of_a_worker(make_pool: Any) -> None:
    values = {"a": "${ cluster.labels.region }", "b": "${ ClusterValues['replicas'] }"}
    assert make_pool().reads("ws/app", values) == IN_PROCESS.reads("ws/app", values)


def test_a_batch_keeps_its_order_across_workers(make_pool: Any) -> None:
    pool = make_pool(workers=2)
    calls = [call("${ cluster.name }", f"c{i}") for i in range(200)]
    answers = pool.render(calls)
    assert answers == [{"values": {"outer": {"v": f"c{i}"}}} for i in range(200)]
    assert len(pool.worker_pids()) == 2


BOUNDS = [
    (
        "memory",
        {"memory_mib": 16},
        HOLDS_40_MB,
        "memory",
        "rendering needed more than the --template-memory limit of 16 MiB",
    ),
    (
        "deadline",
        {"timeout_s": 0.05},
        SLOW,
        "deadline",
        "rendering took longer than the --template-timeout of 0.05s",
    ),
]


@pytest.mark.parametrize(
    ("limits", "template", "limit", "message"),
    [c[1:] for c in BOUNDS],
    ids=[c[0] for c in BOUNDS],
)
def test_a_render_past_a_bound_is_its_clusters_error(
    make_pool: Any, limits: dict[str, Any], template: str, limit: str, message: str
) -> None:
    pool = make_pool(workers=1, **limits)
    (answer,) = pool.render([call(template, "hostile", "deep")])
    assert isinstance(answer, TemplateLimitExceeded)
    assert answer.limit == limit
    assert answer.obj == "Bundle ws/app for Cluster ws/hostile"
    assert answer.field == "values.outer.deep"
    assert answer.message.startswith(message)
    assert pool.stopped[limit] == 1


def test_the_rest_of_the_batch_renders_in_a_fresh_worker(make_pool: Any) -> None:
    pool = make_pool(workers=1, memory_mib=16)
    calls = [call("${ cluster.name }", "a"), call(HOLDS_40_MB, "b"), call("${ cluster.name }", "c")]
    first, hostile, last = pool.render(calls)
    assert (first, last) == ({"values": {"outer": {"v": "a"}}}, {"values": {"outer": {"v": "c"}}})
    assert isinstance(hostile, TemplateLimitExceeded)
    assert pool.started == 2


def busy_batch(pool: TemplatePool, answers: list[RenderAnswer]) -> threading.Thread:
    """Renders BATCH busy calls in a thread, into `answers`."""
    calls = [call(BUSY, f"c{i}") for i in range(BATCH)]
    thread = threading.Thread(target=lambda: answers.extend(pool.render(calls)), daemon=True)
    thread.start()
    return thread


def signal_worker_midway(pool: TemplatePool, thread: threading.Thread, signum: int) -> None:
    deadline = time.monotonic() + WAIT
    while not pool.worker_pids() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # well into the batch (the whole batch takes seconds)
    assert thread.is_alive(), "the batch ended before the worker could be signalled"
    os.kill(pool.worker_pids()[0], signum)
    thread.join(WAIT)


def test_a_worker_killed_by_its_cpu_limit_is_that_render_alone(make_pool: Any) -> None:
    pool = make_pool(workers=1, timeout_s=WAIT)
    answers: list[RenderAnswer] = []
    signal_worker_midway(pool, busy_batch(pool, answers), signal.SIGXCPU)  # as the kernel does
    stopped = [a for a in answers if isinstance(a, TemplateLimitExceeded)]
    assert len(answers) == BATCH
    assert [a.limit for a in stopped] == ["cpu"]
    assert "--template-timeout" in stopped[0].message
    assert sum(isinstance(a, dict) for a in answers) == BATCH - 1
    assert pool.started == 2


def test_a_worker_killed_from_outside_gets_its_render_again(make_pool: Any) -> None:
    pool = make_pool(workers=1, timeout_s=WAIT)
    answers: list[RenderAnswer] = []
    signal_worker_midway(pool, busy_batch(pool, answers), signal.SIGKILL)
    assert len(answers) == BATCH
    assert all(isinstance(a, dict) for a in answers)
    assert pool.started == 2


def test_closing_the_pool_stops_its_workers(make_pool: Any) -> None:
    pool = make_pool(workers=2)
    pool.render([call("${ cluster.name }", f"c{i}") for i in range(40)])
    pids = pool.worker_pids()
    assert len(pids) == 2
    pool.close()
    assert not any(_running(pid) for pid in pids)


ORPHAN_PARENT = """
import sys, time
from bundler.templating_pool import TemplatePool, TemplateLimits
from tests.support.templating_pool.hostile import call
pool = TemplatePool(TemplateLimits(workers=2))
pool.render([call("${ cluster.name }", f"c{i}") for i in range(40)])
print(" ".join(map(str, pool.worker_pids())), flush=True)
time.sleep(600)
"""


def test_workers_die_with_a_parent_killed_without_warning() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", ORPHAN_PARENT], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + WAIT
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_running(pid) for pid in pids)


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
