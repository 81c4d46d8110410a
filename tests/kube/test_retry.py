"""The retry policy: what is retried, how long it waits, and where it stops."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bundler.kube.retry import RetryableError, RetryPolicy, retry_after_seconds, with_retries
from bundler.store.errors import Conflict, Unavailable


class Recorder:
    """A pause that only records the waits asked for (and can give up)."""

    def __init__(self, give_up: bool = False) -> None:
        self.waits: list[float] = []
        self.give_up = give_up

    def __call__(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return self.give_up


def failing(times: int, failure: Callable[[], Exception]) -> Callable[[], str]:
    calls = {"n": 0}

    def attempt() -> str:
        calls["n"] += 1
        if calls["n"] <= times:
            raise failure()
        return "ok"

    return attempt


POLICY = RetryPolicy(attempts=4, initial_delay=0.1, max_delay=0.3, budget=100)


def test_retries_until_success() -> None:
    pause = Recorder()
    assert with_retries(POLICY, failing(3, lambda: RetryableError("503")), target="t", pause=pause)
    assert len(pause.waits) == 3
    # Doubling from 0.1, capped at 0.3, with at most 10% jitter.
    for wait, base in zip(pause.waits, [0.1, 0.2, 0.3], strict=True):
        assert base <= wait <= base * 1.1


def test_gives_up_after_attempts_with_unavailable() -> None:
    pause = Recorder()
    with pytest.raises(Unavailable, match="still failing after retries: 503 boom"):
        with_retries(
            POLICY, failing(9, lambda: RetryableError("503 boom")), target="t", pause=pause
        )
    assert len(pause.waits) == POLICY.attempts - 1


def test_retry_after_is_honoured() -> None:
    pause = Recorder()
    with_retries(POLICY, failing(1, lambda: RetryableError("429", 7.0)), target="t", pause=pause)
    assert pause.waits == [7.0]


def test_retry_after_beyond_budget_gives_up_without_waiting() -> None:
    pause = Recorder()
    policy = RetryPolicy(attempts=4, budget=5)
    with pytest.raises(Unavailable):
        with_retries(
            policy, failing(1, lambda: RetryableError("429", 60.0)), target="t", pause=pause
        )
    assert pause.waits == []


def test_other_errors_are_not_retried() -> None:
    pause = Recorder()
    with pytest.raises(Conflict):
        with_retries(POLICY, failing(1, lambda: Conflict("stale")), target="t", pause=pause)
    assert pause.waits == []


def test_pause_giving_up_ends_retries() -> None:
    with pytest.raises(Unavailable, match="gave up"):
        with_retries(
            POLICY, failing(9, lambda: RetryableError("x")), target="t", pause=Recorder(True)
        )


def test_policy_needs_one_attempt() -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=0)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        (None, None),
        ({"Retry-After": "3"}, 3.0),
        ({"Retry-After": " 0 "}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
    ids=["absent", "no-headers", "seconds", "zero", "garbage", "past-http-date"],
)
def test_retry_after_seconds(headers: dict[str, str] | None, expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected
