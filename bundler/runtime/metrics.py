"""The runtime's metrics: reconciles, work queues and leadership, on a registry the process owns.

Label values stay few whatever the fleet size: a controller is labelled by its kind of work, the
part of its name before any `:` (the agents of a thousand clusters in one process are all `agent`),
and a queue by its host's name. Durations are measured on the host's clock, so a simulated run
records simulated time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

RESULT_SUCCESS = "success"
RESULT_REQUEUE = "requeue"
RESULT_RETRY = "retry"  # a transient error: retried with backoff, quietly
RESULT_ERROR = "error"  # anything else: retried with backoff, logged as a warning or worse

# From 1 ms to about 80 s: a reconcile is a few store calls, or a registry request at worst.
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80)


def controller_label(name: str) -> str:
    """`agent:ws/cluster` -> `agent`: one label value per kind of controller, not per object."""
    return name.partition(":")[0]


class HostView(Protocol):
    """What the scrape reads of a host (bundler.runtime.host.Host)."""

    name: str

    def queue_depth(self) -> int: ...

    def in_flight(self) -> int: ...

    def stalled_for(self) -> float: ...

    @property
    def is_leading(self) -> bool: ...


class RuntimeMetrics:
    """One per process (or per simulated process); every Host of it reports here."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.reconciles = Counter(
            "bundler_reconcile",
            "Reconciles finished, by controller and result (success, requeue, retry, error).",
            ["controller", "result"],
            registry=registry,
        )
        self.reconcile_seconds = Histogram(
            "bundler_reconcile_duration_seconds",
            "How long reconciles took, by controller and result.",
            ["controller", "result"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.queue_seconds = Histogram(
            "bundler_workqueue_queue_duration_seconds",
            "How long a key waited in the work queue before a worker took it, by controller.",
            ["controller"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.retries = Counter(
            "bundler_workqueue_retries",
            "Keys put back with backoff after a failed reconcile, by controller.",
            ["controller"],
            registry=registry,
        )
        self._hosts = _HostCollector()
        registry.register(self._hosts)

    def reconciled(self, controller: str, result: str, seconds: float) -> None:
        label = controller_label(controller)
        self.reconciles.labels(label, result).inc()
        self.reconcile_seconds.labels(label, result).observe(seconds)
        if result in (RESULT_RETRY, RESULT_ERROR):
            self.retries.labels(label).inc()

    def waited(self, controller: str, seconds: float) -> None:
        self.queue_seconds.labels(controller_label(controller)).observe(seconds)

    def watch_host(self, host: HostView) -> None:
        self._hosts.add(host)


class _HostCollector(Collector):
    """Queue depth, work in flight, stall time and leadership of every host, read at scrape."""

    def __init__(self) -> None:
        self._hosts: list[HostView] = []
        self._lock = threading.Lock()

    def add(self, host: HostView) -> None:
        with self._lock:
            self._hosts.append(host)

    def describe(self) -> Iterable[Metric]:
        return list(self._families([]))

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            hosts = list(self._hosts)
        return list(self._families(hosts))

    def _families(self, hosts: list[HostView]) -> Iterator[Metric]:
        rows: list[tuple[str, str, Callable[[HostView], float]]] = [
            (
                "bundler_workqueue_depth",
                "Keys waiting for a worker.",
                lambda h: h.queue_depth(),
            ),
            (
                "bundler_workqueue_in_flight",
                "Keys being reconciled now.",
                lambda h: h.in_flight(),
            ),
            (
                "bundler_workqueue_stalled_seconds",
                "How long keys have waited with no worker making progress (0: not stalled).",
                lambda h: h.stalled_for(),
            ),
            (
                "bundler_leader",
                "1 while this host works (holds the leader Lease, or runs without election).",
                lambda h: 1.0 if h.is_leading else 0.0,
            ),
        ]
        for name, documentation, read in rows:
            family = GaugeMetricFamily(name, documentation, labels=["queue"])
            for host in hosts:
                family.add_metric([host.name], read(host))
            yield family
