"""Metrics of the requests a KubeStore sends: how many, by verb and answer, how long they took,
and how long the client-side rate limiter held them back. Registered on the process's registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from bundler.api.resources import Verb

# Answers for which no HTTP status arrived (refused, reset, timed out, TLS).
CODE_NO_ANSWER = "error"

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class RequestMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "bundler_kube_requests",
            "Requests sent to Kubernetes API servers, by verb and HTTP status code ('error': no "
            "answer). Retries count as requests.",
            ["verb", "code"],
            registry=registry,
        )
        self.latency = Histogram(
            "bundler_kube_request_duration_seconds",
            "How long API requests took until the response headers arrived, by verb.",
            ["verb"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.throttled = Counter(
            "bundler_kube_rate_limiter_wait_seconds",
            "Seconds requests waited for the client-side rate limiter (--kube-api-qps/-burst).",
            registry=registry,
        )

    def answered(self, verb: Verb, code: int | None, seconds: float) -> None:
        self.requests.labels(verb.value, CODE_NO_ANSWER if code is None else str(code)).inc()
        self.latency.labels(verb.value).observe(seconds)

    def waited(self, seconds: float) -> None:
        if seconds > 0:
            self.throttled.inc(seconds)
