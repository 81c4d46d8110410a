"""The endpoint servers: addresses as Go writes them, /metrics, /healthz and /readyz over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter

from bundler.observe.endpoints import Address, EndpointServer, endpoint_servers, parse_address
from bundler.observe.health import HealthChecks
from tests.support.observe.probe_client import get

LOOPBACK = Address("127.0.0.1", 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", None),
        (":8080", Address("", 8080)),
        ("127.0.0.1:9440", Address("127.0.0.1", 9440)),
        ("[::1]:8080", Address("::1", 8080)),
        ("localhost:0", Address("localhost", 0)),
    ],
    ids=["off", "every-interface", "ipv4", "ipv6", "free-port"],
)
def test_addresses(text: str, expected: Address | None) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("8080", "is not HOST:PORT"),
        (":http", "is not HOST:PORT"),
        (":65536", "is not HOST:PORT"),
        ("::1:8080", "in brackets"),
    ],
    ids=["no-colon", "named-port", "port-too-big", "bare-ipv6"],
)
def test_bad_addresses(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_address(text)


@pytest.fixture
def checks() -> tuple[HealthChecks, HealthChecks]:
    return HealthChecks(), HealthChecks()


@pytest.fixture
def registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("bundler_things", "Things.", registry=registry).inc(3)
    return registry


@pytest.fixture
def base_url(
    registry: CollectorRegistry, checks: tuple[HealthChecks, HealthChecks]
) -> Iterator[str]:
    (server,) = endpoint_servers(LOOPBACK, LOOPBACK, registry, *checks)
    bound = server.start()
    yield f"http://127.0.0.1:{bound.port}"
    server.stop()


def test_one_address_serves_metrics_and_probes(
    base_url: str, checks: tuple[HealthChecks, HealthChecks]
) -> None:
    _, readiness = checks
    status, body = get(f"{base_url}/metrics")
    assert (status, "bundler_things_total 3.0" in body) == (200, True)
    assert get(f"{base_url}/healthz") == (200, "ok\n")
    readiness.add("caches", lambda: "2 caches filling")
    readiness.add("shutdown", lambda: None)
    assert get(f"{base_url}/readyz") == (500, "caches: 2 caches filling\n")
    assert get(f"{base_url}/healthz?verbose") == (200, "ok\n")
    assert get(f"{base_url}/nothing")[0] == 404


def test_a_check_that_raises_fails_the_probe(
    base_url: str, checks: tuple[HealthChecks, HealthChecks]
) -> None:
    liveness, _ = checks
    liveness.add("broken", lambda: str(1 / 0))
    assert get(f"{base_url}/healthz") == (
        500,
        "broken: check failed: ZeroDivisionError: division by zero\n",
    )


@pytest.mark.parametrize(
    ("metrics", "health", "routes"),
    [
        (None, None, []),
        (LOOPBACK, None, [["/metrics"]]),
        (None, LOOPBACK, [["/healthz", "/readyz"]]),
        (Address("127.0.0.1", 1), Address("127.0.0.1", 2), [["/metrics"], ["/healthz", "/readyz"]]),
    ],
    ids=["both-off", "metrics-only", "health-only", "two-addresses"],
)
def test_servers_per_address(
    metrics: Address | None,
    health: Address | None,
    routes: list[list[str]],
    registry: CollectorRegistry,
    checks: tuple[HealthChecks, HealthChecks],
) -> None:
    servers = endpoint_servers(metrics, health, registry, *checks)
    assert [sorted(s.routes) for s in servers] == routes


def test_a_taken_address_fails_to_start() -> None:
    first = EndpointServer(LOOPBACK, {})
    bound = first.start()
    try:
        with pytest.raises(OSError):
            EndpointServer(bound, {}).start()
    finally:
        first.stop()
