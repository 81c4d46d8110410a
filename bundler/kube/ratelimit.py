"""Client-side request rate limiting, as client-go's `--kube-api-qps` / `--kube-api-burst` do.

The Python client has no limiter of its own. A token bucket holds up to `burst` tokens and refills
at `qps` per second; every request (each retry and each watch (re)connection included) takes one,
waiting for it when the bucket is empty. Waiting is reserved under the lock and slept outside it,
so concurrent callers queue up fairly instead of all waking at once.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

DEFAULT_QPS = 50.0
DEFAULT_BURST = 300


class TokenBucket:
    def __init__(
        self,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not (math.isfinite(qps) and qps > 0) or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, got {qps} and {burst}")
        self.qps = qps
        self.burst = burst
        self._monotonic = monotonic
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._at = monotonic()

    def acquire(self) -> float:
        """Take one token, waiting until there is one; returns the seconds waited."""
        with self._lock:
            now = self._monotonic()
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
            self._at = now
            # Going below zero reserves a future token: later callers wait behind this one.
            self._tokens -= 1.0
            wait = 0.0 if self._tokens >= 0 else -self._tokens / self.qps
        if wait > 0:
            self._sleep(wait)
        return wait
