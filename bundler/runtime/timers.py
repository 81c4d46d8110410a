"""Timers: one heap and one thread per host fire every delayed requeue, relist, resync and renewal.

A thousand agents in one process share this one thread. Callbacks run on it one at a time, so they
must be short: enqueue a key, or make one store call. A callback that raises is logged and dropped.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from bundler.runtime.clock import Clock
from bundler.runtime.monitor import Monitor

log = logging.getLogger(__name__)


@dataclass(order=True)
class Timer:
    """One scheduled call; `cancel()` it to drop it if it has not fired yet."""

    due: float
    seq: int
    callback: Callable[[], None] = field(compare=False)
    owner: Timers = field(compare=False, repr=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        # A flag rather than removal from the heap: the timer thread skips it when it surfaces.
        with self.owner.monitor.lock:
            self.cancelled = True
            self.owner.monitor.notify()


class Timers:
    def __init__(self, clock: Clock, monitor: Monitor | None = None) -> None:
        self.clock = clock
        self.monitor = monitor or Monitor()
        self._wakeup = self.monitor.condition()
        self._heap: list[Timer] = []
        self._seq = itertools.count()
        self._firing = 0
        self._stopped = False
        self._thread: threading.Thread | None = None

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` on the timer thread `delay` clock seconds from now."""
        return self.call_at(self.clock.monotonic() + max(0.0, delay), callback)

    def call_at(self, due: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` on the timer thread once `clock.monotonic()` reaches `due`."""
        timer = Timer(due, next(self._seq), callback, self)
        with self.monitor.lock:
            heapq.heappush(self._heap, timer)
            if self._heap[0] is timer:
                self._wakeup.notify()
            self.monitor.notify()
        return timer

    def start(self) -> None:
        with self.monitor.lock:
            if self._thread is not None:
                return
            self._stopped = False
            self._thread = threading.Thread(target=self._run, name="runtime-timers", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop firing; a callback already running finishes first. Pending timers are dropped."""
        with self.monitor.lock:
            self._stopped = True
            self._heap.clear()
            self._wakeup.notify_all()
            self.monitor.notify()
            thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def is_idle(self, horizon: float = 0.0) -> bool:
        """Nothing firing and nothing due within `horizon` clock seconds from now."""
        with self.monitor.lock:
            if self._firing:
                return False
            self._drop_cancelled()
            return not self._heap or self._heap[0].due > self.clock.monotonic() + horizon

    def next_due(self) -> float | None:
        """When the earliest timer is due, in monotonic clock seconds (None: no timers)."""
        with self.monitor.lock:
            self._drop_cancelled()
            return self._heap[0].due if self._heap else None

    def pending(self) -> int:
        """Timers not yet fired (cancelled ones may still be counted until they surface)."""
        with self.monitor.lock:
            return len(self._heap)

    def _run(self) -> None:
        while (timer := self._next_due()) is not None:
            try:
                timer.callback()
            except Exception:
                log.exception("timer callback %r failed", timer.callback)
            finally:
                with self.monitor.lock:
                    self._firing -= 1
                    self.monitor.notify()

    def _next_due(self) -> Timer | None:
        """Block until a timer is due and claim it; None once stopped."""
        with self.monitor.lock:
            while not self._stopped:
                self._drop_cancelled()
                due = self._heap[0].due if self._heap else None
                if due is not None and due <= self.clock.monotonic():
                    self._firing += 1
                    return heapq.heappop(self._heap)
                self.clock.wait_until(self._wakeup, due)
            return None

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
