"""What `bundler manager` and `bundler agent` share as long-running processes: metrics and probe
endpoints, the log format, the API client's rate limit, and a graceful shutdown.

Flags (the charts template exactly these names):
- `--metrics-addr` (default `:8080`) serves /metrics, `--health-addr` (default `:9440`) serves
  /healthz and /readyz; `0` switches either off. The bound addresses are logged at start.
- `--log-format text|json`.
- `--kube-api-qps` / `--kube-api-burst`: client-side token bucket of every API client.
- `--kube-list-page-size`: objects per list response (`limit`), client-go's 500 by default.
- `--shutdown-timeout`: on SIGTERM or SIGINT, readiness fails at once, no new work is taken, the
  reconciles running get this long to finish, the leader Lease is released, and the process exits
  0; keep it below the pod's terminationGracePeriodSeconds (30 by default).
- manager only: `--leader-election-lease-duration`, `--leader-election-renew-deadline`,
  `--leader-election-retry-period`.

Liveness fails once keys have waited `STALL_AFTER` seconds with no worker finishing or taking one:
the workers are wedged and a restart is the remedy. Readiness is the caches being filled: a standby
manager, not holding the Lease, is ready and idle.
"""

from __future__ import annotations

import argparse
import logging
import math
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from bundler.commands.flag_types import positive_seconds
from bundler.errors import InvalidInputError, TransientError
from bundler.kube.metrics import RequestMetrics
from bundler.kube.ratelimit import DEFAULT_BURST, DEFAULT_QPS, TokenBucket
from bundler.kube.store import DEFAULT_PAGE_SIZE, KubeOptions
from bundler.observe.endpoints import Address, EndpointServer, endpoint_servers, parse_address
from bundler.observe.health import HealthChecks
from bundler.observe.logs import LogFormat
from bundler.runtime.host import Host
from bundler.runtime.leader import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
)
from bundler.runtime.metrics import RuntimeMetrics
from bundler.runtime.signals import shutdown_signals

log = logging.getLogger(__name__)

DEFAULT_METRICS_ADDR = ":8080"
DEFAULT_HEALTH_ADDR = ":9440"
DEFAULT_SHUTDOWN_TIMEOUT = 25.0
# Keys waiting this long (clock seconds) with no worker progress: the workers are wedged.
STALL_AFTER = 300.0


def address(text: str) -> Address | None:
    """argparse type: HOST:PORT, :PORT, or 0 (off)."""
    try:
        return parse_address(text)
    except ValueError as bad:
        raise argparse.ArgumentTypeError(str(bad)) from None


def positive_number(text: str) -> float:
    """argparse type: a finite number greater than zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def positive_integer(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_operations_arguments(parser: argparse.ArgumentParser) -> None:
    """The endpoint, logging, API client and shutdown flags."""
    group = parser.add_argument_group("operations")
    group.add_argument(
        "--metrics-addr",
        type=address,
        default=address(DEFAULT_METRICS_ADDR),
        metavar="ADDR",
        help=f"serve Prometheus /metrics here, HOST:PORT or :PORT; 0: off "
        f"(default {DEFAULT_METRICS_ADDR})",
    )
    group.add_argument(
        "--health-addr",
        type=address,
        default=address(DEFAULT_HEALTH_ADDR),
        metavar="ADDR",
        help=f"serve /healthz and /readyz here; 0: off (default {DEFAULT_HEALTH_ADDR})",
    )
    group.add_argument(
        "--log-format",
        type=LogFormat,
        choices=list(LogFormat),
        default=LogFormat.TEXT,
        help="text (default) or json: one object per line with time, level, logger, msg and "
        "the object the line is about",
    )
    group.add_argument(
        "--kube-api-qps",
        type=positive_number,
        default=DEFAULT_QPS,
        metavar="QPS",
        help=f"requests per second to each API server, sustained (default {DEFAULT_QPS:g})",
    )
    group.add_argument(
        "--kube-api-burst",
        type=positive_integer,
        default=DEFAULT_BURST,
        metavar="N",
        help=f"requests to each API server in a burst (default {DEFAULT_BURST})",
    )
    group.add_argument(
        "--kube-list-page-size",
        type=positive_integer,
        default=DEFAULT_PAGE_SIZE,
        metavar="N",
        help="read lists in pages of N objects, as client-go's pager does "
        f"(default {DEFAULT_PAGE_SIZE})",
    )
    group.add_argument(
        "--shutdown-timeout",
        type=positive_seconds,
        default=DEFAULT_SHUTDOWN_TIMEOUT,
        metavar="SECONDS",
        help="on SIGTERM, let running reconciles finish this long before releasing the lease "
        f"and exiting (default {DEFAULT_SHUTDOWN_TIMEOUT:g})",
    )


def add_leader_election_arguments(parser: argparse.ArgumentParser) -> None:
    """The Lease timings, client-go's defaults: retry < renew deadline < lease duration."""
    parser.add_argument(
        "--leader-election-lease-duration",
        type=positive_integer,
        default=DEFAULT_LEASE_DURATION,
        metavar="SECONDS",
        help="how long a standby waits after the leader's last renewal before taking over "
        f"(default {DEFAULT_LEASE_DURATION})",
    )
    parser.add_argument(
        "--leader-election-renew-deadline",
        type=positive_seconds,
        default=DEFAULT_RENEW_DEADLINE,
        metavar="SECONDS",
        help="how long the leader keeps trying to renew before it stops working "
        f"(default {DEFAULT_RENEW_DEADLINE:g})",
    )
    parser.add_argument(
        "--leader-election-retry-period",
        type=positive_seconds,
        default=DEFAULT_RETRY_PERIOD,
        metavar="SECONDS",
        help=f"how often candidates try to acquire or renew (default {DEFAULT_RETRY_PERIOD:g})",
    )


def check_lease_timings(args: argparse.Namespace) -> None:
    """InvalidInputError unless retry period < renew deadline < lease duration."""
    retry, renew = args.leader_election_retry_period, args.leader_election_renew_deadline
    lease = args.leader_election_lease_duration
    if not retry < renew < lease:
        raise InvalidInputError(
            f"need --leader-election-retry-period ({retry:g}) < --leader-election-renew-deadline "
            f"({renew:g}) < --leader-election-lease-duration ({lease})",
            field="--leader-election-renew-deadline",
        )


@dataclass
class Operations:
    """The observability of one process: one registry, its probes, its endpoints."""

    metrics_addr: Address | None
    health_addr: Address | None
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    page_size: int = DEFAULT_PAGE_SIZE
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT
    stall_after: float = STALL_AFTER
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    liveness: HealthChecks = field(default_factory=HealthChecks)
    readiness: HealthChecks = field(default_factory=HealthChecks)
    servers: list[EndpointServer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.runtime = RuntimeMetrics(self.registry)
        self.requests = RequestMetrics(self.registry)
        self._stopping = threading.Event()
        self.readiness.add("shutdown", self._shutdown_problem)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Operations:
        return cls(
            metrics_addr=args.metrics_addr,
            health_addr=args.health_addr,
            qps=args.kube_api_qps,
            burst=args.kube_api_burst,
            page_size=args.kube_list_page_size,
            shutdown_timeout=args.shutdown_timeout,
        )

    def kube_options(self) -> KubeOptions:
        """Options for one API client: its own token bucket, the shared request metrics."""
        return KubeOptions(
            limiter=TokenBucket(self.qps, self.burst),
            metrics=self.requests,
            page_size=self.page_size,
        )

    def watch_host(self, host: Host) -> None:
        """Probe `host`: ready once its caches are filled, alive while its workers progress."""
        self.readiness.add(f"caches:{host.name}", host.caches_problem)
        self.liveness.add(f"workers:{host.name}", lambda: host.stall_problem(self.stall_after))

    @contextmanager
    def serving(self) -> Iterator[list[Address]]:
        """The endpoints, up for the block; yields the bound addresses."""
        self.servers = endpoint_servers(
            self.metrics_addr, self.health_addr, self.registry, self.liveness, self.readiness
        )
        try:
            bound = [self._start(server) for server in self.servers]
            for server, where in zip(self.servers, bound, strict=True):
                log.info("serving %s on %s", ", ".join(sorted(server.routes)), where)
            yield bound
        finally:
            for server in self.servers:
                server.stop()

    def _start(self, server: EndpointServer) -> Address:
        try:
            return server.start()
        except OSError as error:
            flag = "--metrics-addr" if server.address == self.metrics_addr else "--health-addr"
            raise TransientError(
                f"{flag} {server.address}: cannot listen there: {error.strerror or error}"
            ) from None

    def run_until_signal(
        self, start: Callable[[], None], stop: Callable[[float], None]
    ) -> signal.Signals:
        """Serve the endpoints, `start()`, wait for SIGTERM or SIGINT, then `stop(timeout)`."""
        with shutdown_signals() as waiter, self.serving():
            start()
            try:
                received = waiter.wait()
                log.info("%s: stopping within %gs", received.name, self.shutdown_timeout)
            finally:
                self._stopping.set()
                stop(self.shutdown_timeout)
        return received

    def _shutdown_problem(self) -> str | None:
        return "shutting down" if self._stopping.is_set() else None
