"""Every request a KubeStore sends is counted by Kubernetes verb and HTTP status code, retries
and requests that got no answer included, and the rate limiter's waits are added up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from prometheus_client import CollectorRegistry

from bundler.api.resources import NAMESPACE
from bundler.apiserver import ApiServer
from bundler.kube.metrics import RequestMetrics
from bundler.kube.ratelimit import TokenBucket
from bundler.kube.store import KubeStore
from bundler.store.errors import NotFound, Unavailable
from tests.support.kube.store_client import FAST

Connect = Callable[..., KubeStore]


def requests(registry: CollectorRegistry, verb: str, code: str) -> float:
    return (
        registry.get_sample_value("bundler_kube_requests_total", {"verb": verb, "code": code}) or 0
    )


def test_requests_are_counted_by_verb_and_code(connect: Connect) -> None:
    registry = CollectorRegistry()
    store = connect(replace(FAST, metrics=RequestMetrics(registry)))
    store.create(NAMESPACE, {"metadata": {"name": "new"}})
    store.list(NAMESPACE)
    store.patch(NAMESPACE, "new", {"metadata": {"labels": {"a": "b"}}})
    with pytest.raises(NotFound):
        store.get(NAMESPACE, "missing")
    store.delete(NAMESPACE, "new")
    counted = {
        (verb, code): requests(registry, verb, code)
        for verb, code in [
            ("create", "201"),
            ("list", "200"),
            ("patch", "200"),
            ("get", "404"),
            ("delete", "200"),
        ]
    }
    assert counted == dict.fromkeys(counted, 1.0)
    assert (
        registry.get_sample_value("bundler_kube_request_duration_seconds_count", {"verb": "get"})
        == 1
    )


def test_requests_without_an_answer_count_as_errors_once_per_attempt(
    server: ApiServer, connect: Connect
) -> None:
    registry = CollectorRegistry()
    store = connect(replace(FAST, metrics=RequestMetrics(registry)))
    server.stop()
    with pytest.raises(Unavailable):
        store.get(NAMESPACE, "ws")
    assert requests(registry, "get", "error") == FAST.retry.attempts


def test_the_rate_limiter_holds_requests_and_its_waits_are_counted(connect: Connect) -> None:
    registry = CollectorRegistry()
    waits: list[float] = []
    limiter = TokenBucket(5.0, 1, sleep=waits.append)
    store = connect(replace(FAST, metrics=RequestMetrics(registry), limiter=limiter))
    for _ in range(3):
        store.get(NAMESPACE, "ws")
    assert len(waits) == 2, "the first request takes the burst, the next two wait"
    waited = registry.get_sample_value("bundler_kube_rate_limiter_wait_seconds_total")
    assert waited == pytest.approx(sum(waits))
