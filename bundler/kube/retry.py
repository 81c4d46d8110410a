"""How requests to the API server are retried: exponential backoff honouring Retry-After, bounded.

Only failures that may heal are retried (429, 5xx, connection errors); the caller marks them by
raising `RetryableError`. The bound is both a number of attempts and a deadline, so a call never
takes much longer than `RetryPolicy.budget` seconds plus one request timeout.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from bundler.store.errors import Unavailable

T = TypeVar("T")

# Returns True when the caller has given up (e.g. its watch was stopped) and waiting should end.
Pause = Callable[[float], bool]


@dataclass(frozen=True)
class RetryPolicy:
    """At most `attempts` tries, waits doubling from `initial_delay` up to `max_delay`, and no wait
    that would end later than `budget` seconds after the first try."""

    attempts: int = 5
    initial_delay: float = 0.2
    max_delay: float = 8.0
    budget: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be at least 1, got {self.attempts}")

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (0-based), with up to 10% jitter so that many
        clients failing together do not come back together."""
        base = min(self.max_delay, self.initial_delay * (2.0**retry))
        return base * (1.0 + random.random() / 10)


class RetryableError(Exception):
    """One attempt failed in a way worth retrying; `retry_after` is the server's hint in seconds."""

    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date); None when absent or malformed."""
    value = (headers or {}).get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def sleep_pause(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def with_retries(
    policy: RetryPolicy,
    attempt: Callable[[], T],
    *,
    target: str,
    pause: Pause = sleep_pause,
) -> T:
    """Run `attempt` until it returns, retrying on `RetryableError` within the policy's bound.

    Raises Unavailable naming `target` and the last cause once the bound is reached, when a
    Retry-After hint points past the deadline, or when `pause` reports that the caller gave up.
    """
    deadline = time.monotonic() + policy.budget
    for retry in range(policy.attempts):
        try:
            return attempt()
        except RetryableError as failure:
            last = failure
        if retry + 1 == policy.attempts:
            break
        # Never come back sooner than the server asked; give up rather than wait past the budget.
        delay = max(policy.backoff(retry), last.retry_after or 0.0)
        if time.monotonic() + delay > deadline:
            break
        if pause(delay):
            raise Unavailable("gave up while waiting to retry", obj=target)
    raise Unavailable(f"still failing after retries: {last.cause}", obj=target)
