"""Time as the runtime and controllers see it: wall time, monotonic time, sleeping and timed waits.

Controllers never call `time` or `datetime.now` themselves; they get a Clock, so the simulator and
the tests can run hours of leases, backoffs and resyncs without waiting for them. `ManualClock` only
moves when `advance()` is called, and wakes every thread waiting on it when it does.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Wall time, timezone-aware UTC: for timestamps written to objects."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: for deadlines and delays."""
        ...

    def sleep(self, seconds: float) -> None: ...

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        """Wait on `cond` (held by the caller) until notified or `monotonic()` reaches `deadline`.

        May return early, like `Condition.wait`: callers re-check their state in a loop.
        """
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        if deadline is None:
            cond.wait()
        else:
            cond.wait(max(0.0, deadline - time.monotonic()))


DEFAULT_MANUAL_START = datetime(2024, 1, 1, tzinfo=UTC)


class ManualClock:
    """A clock that stands still until `advance()`; monotonic time starts at 0."""

    def __init__(self, start: datetime = DEFAULT_MANUAL_START) -> None:
        if start.tzinfo is None:
            raise ValueError(f"ManualClock start {start.isoformat()} must be timezone-aware")
        self._start = start.astimezone(UTC)
        self._elapsed = 0.0
        self._lock = threading.Lock()
        # Conditions of threads blocked in wait_until; a Counter because several threads may
        # wait on one condition.
        self._waiters: Counter[threading.Condition] = Counter()

    def now(self) -> datetime:
        with self._lock:
            return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        with self._lock:
            return self._elapsed

    def advance(self, seconds: float) -> None:
        """Move time forward and wake everything waiting on this clock."""
        if seconds < 0:
            raise ValueError(f"ManualClock cannot go back ({seconds} seconds)")
        with self._lock:
            self._elapsed += seconds
            waiters = list(self._waiters)
        for cond in waiters:
            with cond:
                cond.notify_all()

    def sleep(self, seconds: float) -> None:
        """Block until other threads have advanced the clock by `seconds`."""
        cond = threading.Condition()
        with cond:
            deadline = self.monotonic() + seconds
            while self.monotonic() < deadline:
                self.wait_until(cond, deadline)

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        # Registering under the clock lock, while the caller holds `cond`, means an advance()
        # either happened before the check below or will notify `cond` after we wait on it.
        with self._lock:
            if deadline is not None and self._elapsed >= deadline:
                return
            self._waiters[cond] += 1
        try:
            cond.wait()
        finally:
            with self._lock:
                self._waiters[cond] -= 1
                if self._waiters[cond] <= 0:
                    del self._waiters[cond]
