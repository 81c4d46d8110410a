"""Per-key exponential backoff: how long a failing key waits before its next attempt.

The n-th consecutive failure of a key waits `base * 2**(n-1)` seconds, capped at `cap`; a success
(`forget`) starts the key over. Keys are independent, so one broken object does not slow the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_BASE = 0.005
DEFAULT_CAP = 300.0


class ExponentialBackoff(Generic[K]):
    def __init__(self, base: float = DEFAULT_BASE, cap: float = DEFAULT_CAP) -> None:
        if base <= 0 or cap < base:
            raise ValueError(f"backoff needs 0 < base <= cap, got base={base} cap={cap}")
        self.base = base
        self.cap = cap
        self._failures: dict[K, int] = {}
        self._lock = threading.Lock()

    def next_delay(self, key: K) -> float:
        """Record one more failure of `key` and return how long it should wait."""
        with self._lock:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        # Past ~60 doublings any sane cap is exceeded; stop before the float overflows.
        return min(self.cap, self.base * 2.0 ** min(failures, 64))

    def forget(self, key: K) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def failures(self, key: K) -> int:
        with self._lock:
            return self._failures.get(key, 0)
