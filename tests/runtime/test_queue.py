"""The work queue: de-duplication, one worker per key, delayed adds, backoff, pause, shutdown."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from bundler.runtime.backoff import ExponentialBackoff
from bundler.runtime.clock import ManualClock
from bundler.runtime.queue import WorkQueue
from bundler.runtime.timers import Timers
from tests.support.runtime.widgets import WAIT


def drain(queue: WorkQueue[str]) -> list[str]:
    """Take and finish every ready key."""
    taken: list[str] = []
    while (key := queue.get(timeout=0)) is not None:
        queue.done(key)
        taken.append(key)
    return taken


def test_adding_a_queued_key_again_queues_it_once(timers: Timers) -> None:
    queue: WorkQueue[str] = WorkQueue(timers)
    for key in ["a", "b", "a", "a", "c", "b"]:
        queue.add(key)
    assert drain(queue) == ["a", "b", "c"]


def test_a_key_added_while_processing_waits_for_done(timers: Timers) -> None:
    queue: WorkQueue[str] = WorkQueue(timers)
    queue.add("a")
    assert queue.get(timeout=0) == "a"
    queue.add("a")
    queue.add("a")
    assert queue.get(timeout=0) is None, "a second worker must not get a key being processed"
    queue.done("a")
    assert queue.get(timeout=0) == "a"
    queue.done("a")
    assert queue.get(timeout=0) is None


def test_many_workers_never_process_one_key_at_once(timers: Timers) -> None:
    queue: WorkQueue[int] = WorkQueue(timers)
    lock = threading.Lock()
    active: set[int] = set()
    overlaps: list[int] = []
    processed: Counter[int] = Counter()

    def work() -> None:
        while (key := queue.get(timeout=WAIT)) is not None:
            with lock:
                if key in active:
                    overlaps.append(key)
                active.add(key)
            for _ in range(3):
                queue.add(key)  # events for the key keep arriving while it is processed
            with lock:
                active.discard(key)
                processed[key] += 1
            queue.done(key)

    for key in range(5):
        queue.add(key)
    workers = [threading.Thread(target=work) for _ in range(8)]
    for worker in workers:
        worker.start()
    assert timers.monitor.wait_for(lambda: min(processed.values(), default=0) >= 20, WAIT)
    queue.shutdown()
    for worker in workers:
        worker.join(WAIT)
    assert overlaps == []


def test_add_after_releases_the_key_when_the_clock_gets_there(
    clock: ManualClock, timers: Timers
) -> None:
    queue: WorkQueue[str] = WorkQueue(timers)
    queue.add_after("a", 10)
    clock.advance(9)
    assert queue.get(timeout=0) is None
    clock.advance(1)
    assert queue.get(timeout=WAIT) == "a"


def test_add_after_keeps_only_the_earliest_due_time(clock: ManualClock, timers: Timers) -> None:
    queue: WorkQueue[str] = WorkQueue(timers)
    queue.add_after("a", 30)
    queue.add_after("a", 5)
    queue.add_after("a", 60)
    clock.advance(5)
    assert queue.get(timeout=WAIT) == "a"
    queue.done("a")
    clock.advance(100)
    assert timers.monitor.wait_for(timers.is_idle, WAIT)
    assert len(queue) == 0, "the later add_afters were superseded"


@pytest.mark.parametrize(
    ("base", "cap", "expected"),
    [
        (0.005, 300.0, [0.005, 0.01, 0.02, 0.04, 0.08]),
        (1.0, 5.0, [1.0, 2.0, 4.0, 5.0, 5.0]),
        (2.0, 2.0, [2.0, 2.0, 2.0, 2.0, 2.0]),
    ],
    ids=["defaults-double", "capped", "constant"],
)
def test_backoff_doubles_per_failure_up_to_the_cap(
    base: float, cap: float, expected: list[float]
) -> None:
    backoff: ExponentialBackoff[str] = ExponentialBackoff(base, cap)
    assert [backoff.next_delay("a") for _ in expected] == expected


def test_backoff_is_per_key_and_forget_starts_over() -> None:
    backoff: ExponentialBackoff[str] = ExponentialBackoff(1.0, 100.0)
    for _ in range(3):
        backoff.next_delay("a")
    assert (backoff.next_delay("b"), backoff.failures("a")) == (1.0, 3)
    backoff.forget("a")
    assert backoff.next_delay("a") == 1.0


def test_huge_failure_counts_stay_at_the_cap() -> None:
    backoff: ExponentialBackoff[str] = ExponentialBackoff(1.0, 300.0)
    assert [backoff.next_delay("a") for _ in range(2000)][-1] == 300.0


@pytest.mark.parametrize(("base", "cap"), [(0.0, 1.0), (2.0, 1.0)], ids=["zero-base", "cap-below"])
def test_backoff_rejects_nonsense(base: float, cap: float) -> None:
    with pytest.raises(ValueError, match="base"):
        ExponentialBackoff(base, cap)


def test_rate_limited_adds_wait_for_the_growing_backoff(clock: ManualClock, timers: Timers) -> None:
    queue: WorkQueue[str] = WorkQueue(timers, ExponentialBackoff(1.0, 60.0))
    assert [queue.add_rate_limited("a") for _ in range(3)] == [1.0, 2.0, 4.0]
    clock.advance(1)
    assert queue.get(timeout=WAIT) == "a", "pending add_afters keep the earliest"
    queue.done("a")
    queue.forget("a")
    assert (queue.failures("a"), queue.add_rate_limited("a")) == (0, 1.0)


def test_paused_queue_keeps_keys_until_resumed(timers: Timers) -> None:
    queue: WorkQueue[str] = WorkQueue(timers, paused=True)
    queue.add("a")
    assert (queue.get(timeout=0), queue.is_idle(), len(queue)) == (None, True, 1)
    queue.resume()
    assert queue.get(timeout=0) == "a"


def test_shutdown_wakes_blocked_workers_and_ignores_adds(timers: Timers) -> None:
    queue: WorkQueue[str] = WorkQueue(timers)
    results: list[str | None] = []
    worker = threading.Thread(target=lambda: results.append(queue.get()))
    worker.start()
    queue.shutdown()
    worker.join(WAIT)
    queue.add("a")
    queue.add_after("b", 1)
    assert (results, queue.get(timeout=0), len(queue)) == ([None], None, 0)
