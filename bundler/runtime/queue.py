"""The work queue: keys waiting to be reconciled, each at most once, never by two workers at a time.

Like client-go's workqueue: a key added while queued is queued once; a key added while a worker
processes it is queued again when the worker calls `done()`. `add_after` parks a key on the host's
timers (keeping only the earliest due time per key) and `add_rate_limited` parks it for its
per-key backoff. While paused (not leading, or not started) keys accumulate but `get()` hands
none out. Timeouts of `get()` and `wait_idle()` are real seconds; delays are clock seconds.

For liveness, the queue remembers when it last made progress (a key handed out or finished, or
work appearing in an empty queue): `stalled_for()` is how long keys have been ready meanwhile.
`on_taken(key, waited)` hears how long each key waited, in clock seconds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from bundler.runtime.backoff import ExponentialBackoff
from bundler.runtime.timers import Timer, Timers

K = TypeVar("K", bound=Hashable)


class WorkQueue(Generic[K]):
    def __init__(
        self,
        timers: Timers,
        backoff: ExponentialBackoff[K] | None = None,
        *,
        paused: bool = False,
        on_taken: Callable[[K, float], None] | None = None,
    ) -> None:
        self._timers = timers
        self._clock = timers.clock
        self._on_taken = on_taken
        self._backoff: ExponentialBackoff[K] = backoff or ExponentialBackoff()
        self._monitor = timers.monitor
        self._ready_cond = self._monitor.condition()
        self._ready: deque[K] = deque()
        # Keys that need processing: in `_ready`, or processing and to be queued again on done().
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: dict[K, Timer] = {}
        self._paused = paused
        self._shut_down = False
        self._ready_since: dict[K, float] = {}
        self._progress_at = self._clock.monotonic()

    def add(self, key: K) -> None:
        with self._monitor.lock:
            if self._shut_down or key in self._dirty:
                return
            self._dirty.add(key)
            if key in self._processing:
                return
            self._append_ready(key)
            self._monitor.notify()

    def add_after(self, key: K, delay: float) -> None:
        """Add `key` once `delay` clock seconds have passed; an earlier pending add_after wins."""
        if delay <= 0:
            self.add(key)
            return
        due = self._timers.clock.monotonic() + delay
        with self._monitor.lock:
            if self._shut_down:
                return
            pending = self._waiting.get(key)
            if pending is not None:
                if pending.due <= due:
                    return
                pending.cancel()
            # The timer thread needs the lock to claim `timer`, so it is bound before it can fire.
            timer = self._timers.call_at(due, lambda: self._release(key, timer))
            self._waiting[key] = timer

    def add_rate_limited(self, key: K) -> float:
        """Add `key` after its backoff (growing until `forget`); returns the delay."""
        delay = self._backoff.next_delay(key)
        self.add_after(key, delay)
        return delay

    def forget(self, key: K) -> None:
        """`key` succeeded: its next failure starts from the smallest backoff again."""
        self._backoff.forget(key)

    def failures(self, key: K) -> int:
        return self._backoff.failures(key)

    def get(self, timeout: float | None = None) -> K | None:
        """The next key to process (mark it `done()` afterwards); None on timeout or shutdown."""
        with self._monitor.lock:
            ready = self._ready_cond.wait_for(
                lambda: self._shut_down or (self._ready and not self._paused), timeout
            )
            if not ready or self._shut_down:
                return None
            key = self._ready.popleft()
            self._processing.add(key)
            self._dirty.discard(key)
            now = self._clock.monotonic()
            self._progress_at = now
            waited = now - self._ready_since.pop(key, now)
        if self._on_taken is not None:
            self._on_taken(key, waited)
        return key

    def done(self, key: K) -> None:
        with self._monitor.lock:
            self._processing.discard(key)
            self._progress_at = self._clock.monotonic()
            if key in self._dirty and not self._shut_down:
                self._append_ready(key)
            self._monitor.notify()

    def pause(self) -> None:
        """Hand out no more keys (those being processed finish); adds are still recorded."""
        with self._monitor.lock:
            self._paused = True
            self._monitor.notify()

    def resume(self) -> None:
        with self._monitor.lock:
            if self._paused:
                self._progress_at = self._clock.monotonic()
            self._paused = False
            self._ready_cond.notify_all()
            self._monitor.notify()

    @property
    def paused(self) -> bool:
        return self._paused

    def shutdown(self) -> None:
        """Wake every `get()` with None and ignore further adds; parked keys are dropped."""
        with self._monitor.lock:
            self._shut_down = True
            for timer in self._waiting.values():
                timer.cancel()
            self._waiting.clear()
            self._ready.clear()
            self._ready_since.clear()
            self._dirty.clear()
            self._ready_cond.notify_all()
            self._monitor.notify()

    def __len__(self) -> int:
        """Keys ready to be handed out (not counting those processing or parked)."""
        with self._monitor.lock:
            return len(self._ready)

    def processing(self) -> int:
        with self._monitor.lock:
            return len(self._processing)

    def is_idle(self) -> bool:
        """Nothing processing and nothing that could be handed out (a paused queue is settled)."""
        with self._monitor.lock:
            return not self._processing and (self._paused or not self._ready)

    def stalled_for(self) -> float:
        """Clock seconds keys have been ready to hand out with no progress (0: none waiting)."""
        with self._monitor.lock:
            if self._paused or self._shut_down or not self._ready:
                return 0.0
            return max(0.0, self._clock.monotonic() - self._progress_at)

    def _append_ready(self, key: K) -> None:
        """Queue `key` for a worker (lock held)."""
        now = self._clock.monotonic()
        if not self._ready:
            # Work appearing in an empty queue starts the stall clock afresh.
            self._progress_at = now
        self._ready.append(key)
        self._ready_since[key] = now
        self._ready_cond.notify()

    def _release(self, key: K, timer: Timer) -> None:
        with self._monitor.lock:
            if self._waiting.get(key) is timer:
                del self._waiting[key]
            self.add(key)
