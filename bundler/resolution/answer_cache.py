"""A short memory for answers from outside (a registry's tags), shared by concurrent askers.

`AnswerCache.get(key, ask)` returns the remembered answer while it is fresh, else asks once: callers
with the same key wait for that one question instead of sending their own, so many Bundles on one
chart cost one request. Failures (BundlerErrors) are remembered too, for `error_seconds`, so a
registry that is down is not asked again by every Bundle in the same pass. Time is the given
Clock's, so tests with a ManualClock control expiry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from bundler.errors import BundlerError
from bundler.runtime.clock import Clock

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class _Entry(Generic[V]):
    expires: float
    answer: V | BundlerError


class AnswerCache(Generic[K, V]):
    def __init__(self, clock: Clock, seconds: float, error_seconds: float | None = None) -> None:
        self._clock = clock
        self._seconds = seconds
        self._error_seconds = seconds if error_seconds is None else error_seconds
        self._lock = threading.Lock()
        self._entries: dict[K, _Entry[V]] = {}
        self._asking: dict[K, threading.Lock] = {}

    def get(self, key: K, ask: Callable[[], V]) -> V:
        """The fresh answer for `key`, asking (once among concurrent callers) when there is none."""
        with self._lock:
            asking = self._asking.setdefault(key, threading.Lock())
        with asking:
            entry = self._fresh(key)
            if entry is None:
                entry = self._ask(key, ask)
        if isinstance(entry.answer, BundlerError):
            raise entry.answer.with_traceback(None)
        return entry.answer

    def _fresh(self, key: K) -> _Entry[V] | None:
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or entry.expires <= self._clock.monotonic():
            return None
        return entry

    def _ask(self, key: K, ask: Callable[[], V]) -> _Entry[V]:
        now = self._clock.monotonic()
        try:
            entry: _Entry[V] = _Entry(now + self._seconds, ask())
        except BundlerError as error:
            entry = _Entry(now + self._error_seconds, error)
        with self._lock:
            self._forget_expired(now)
            self._entries[key] = entry
        return entry

    def _forget_expired(self, now: float) -> None:
        for key in [k for k, e in self._entries.items() if e.expires <= now]:
            del self._entries[key]
            asking = self._asking.get(key)
            if asking is not None and not asking.locked():
                del self._asking[key]
