"""The client-side token bucket (--kube-api-qps, --kube-api-burst), on a fake clock."""

from __future__ import annotations

import pytest

from bundler.kube.ratelimit import TokenBucket


class FakeTime:
    """monotonic() and sleep() that only move when slept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize(
    ("qps", "burst", "requests", "waits"),
    [
        (10.0, 3, 3, []),
        (10.0, 3, 5, [0.1, 0.1]),
        (2.0, 1, 3, [0.5, 0.5]),
    ],
    ids=["within-burst", "beyond-burst-at-qps", "no-burst"],
)
def test_requests_beyond_the_burst_wait_for_the_rate(
    qps: float, burst: int, requests: int, waits: list[float]
) -> None:
    time = FakeTime()
    bucket = TokenBucket(qps, burst, monotonic=time.monotonic, sleep=time.sleep)
    for _ in range(requests):
        bucket.acquire()
    assert time.slept == pytest.approx(waits)


def test_an_idle_bucket_refills_up_to_the_burst() -> None:
    time = FakeTime()
    bucket = TokenBucket(10.0, 2, monotonic=time.monotonic, sleep=time.sleep)
    bucket.acquire(), bucket.acquire()
    time.now += 60.0
    assert [bucket.acquire() for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])


def test_waiting_callers_queue_behind_each_other() -> None:
    """Reservations are taken under the lock: the second waiter waits for the second token."""
    time = FakeTime()
    bucket = TokenBucket(4.0, 1, monotonic=time.monotonic, sleep=lambda s: None)
    assert [bucket.acquire() for _ in range(3)] == pytest.approx([0.0, 0.25, 0.5])


@pytest.mark.parametrize(
    ("qps", "burst"), [(0.0, 1), (-1.0, 1), (float("nan"), 1), (1.0, 0)], ids=str
)
def test_a_bucket_needs_a_positive_rate_and_burst(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match="qps > 0 and burst >= 1"):
        TokenBucket(qps, burst)
