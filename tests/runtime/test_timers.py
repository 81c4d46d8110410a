"""The manual clock and the timer thread: timers fire once, in order, when the clock gets there."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest

from bundler.runtime.clock import DEFAULT_MANUAL_START, ManualClock, SystemClock
from bundler.runtime.timers import Timers
from tests.support.runtime.widgets import WAIT


def test_manual_clock_moves_only_when_advanced() -> None:
    clock = ManualClock()
    assert (clock.now(), clock.monotonic()) == (DEFAULT_MANUAL_START, 0.0)
    clock.advance(90.5)
    assert clock.now() == DEFAULT_MANUAL_START + timedelta(seconds=90.5)
    assert clock.monotonic() == 90.5


@pytest.mark.parametrize(
    "make",
    [lambda: ManualClock(datetime(2024, 1, 1)), lambda: ManualClock().advance(-1)],
    ids=["naive-start", "going-back"],
)
def test_manual_clock_rejects_misuse(make: object) -> None:
    with pytest.raises(ValueError):
        make()  # type: ignore[operator]


def test_system_clock_is_utc() -> None:
    assert SystemClock().now().utcoffset() == timedelta(0)


def test_manual_sleep_returns_once_others_advance_the_clock() -> None:
    clock = ManualClock()
    woke = threading.Event()

    def sleep() -> None:
        clock.sleep(3)
        woke.set()

    sleeper = threading.Thread(target=sleep)
    sleeper.start()
    while not woke.wait(0.01):
        clock.advance(1)
    sleeper.join(WAIT)
    assert clock.monotonic() >= 3


def test_timers_fire_in_due_order_when_the_clock_gets_there(
    clock: ManualClock, timers: Timers
) -> None:
    fired: list[str] = []
    for name, delay in [("late", 5.0), ("early", 1.0), ("middle", 3.0)]:
        timers.call_later(delay, lambda name=name: fired.append(name))  # type: ignore[misc]
    clock.advance(2)
    assert timers.monitor.wait_for(timers.is_idle, WAIT)
    assert fired == ["early"]
    clock.advance(10)
    assert timers.monitor.wait_for(timers.is_idle, WAIT)
    assert fired == ["early", "middle", "late"]


def test_cancelled_timer_never_fires(clock: ManualClock, timers: Timers) -> None:
    fired: list[str] = []
    timers.call_later(1, lambda: fired.append("cancelled")).cancel()
    timers.call_later(2, lambda: fired.append("kept"))
    clock.advance(5)
    assert timers.monitor.wait_for(timers.is_idle, WAIT)
    assert fired == ["kept"]


def test_a_failing_callback_does_not_stop_the_timer_thread(
    clock: ManualClock, timers: Timers
) -> None:
    fired = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    timers.call_later(1, fail)
    timers.call_later(2, fired.set)
    clock.advance(3)
    assert fired.wait(WAIT)


def test_is_idle_looks_ahead_by_the_horizon(clock: ManualClock, timers: Timers) -> None:
    timers.call_later(30, lambda: None)
    assert timers.is_idle()
    assert not timers.is_idle(horizon=60)


def test_next_due_skips_cancelled_timers(clock: ManualClock, timers: Timers) -> None:
    assert timers.next_due() is None
    timers.call_later(10, lambda: None).cancel()
    timers.call_later(20, lambda: None)
    assert timers.next_due() == 20


def test_stop_drops_pending_timers_and_ends_the_thread(clock: ManualClock) -> None:
    timers = Timers(clock)
    timers.start()
    fired: list[int] = []
    timers.call_later(1, lambda: fired.append(1))
    before = threading.active_count()
    timers.stop(WAIT)
    clock.advance(5)
    assert (fired, threading.active_count(), timers.pending()) == ([], before - 1, 0)
