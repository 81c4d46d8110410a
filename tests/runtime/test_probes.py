"""What a host tells the probes and the metrics: ready once its caches are filled (a standby too),
stalled when keys wait and no worker makes progress, and every reconcile counted by result."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import CollectorRegistry

from bundler.api.resources import Resource
from bundler.errors import InvalidInputError, TransientError
from bundler.runtime.clock import ManualClock
from bundler.runtime.controller import Result
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.runtime.leader import LeaseConfig
from bundler.runtime.metrics import RuntimeMetrics
from bundler.runtime.queue import WorkQueue
from bundler.runtime.timers import Timers
from bundler.store.memory import MemoryStore
from tests.support.runtime.widgets import WAIT, WIDGET, widget
from tests.support.stores import StoreProxy, Verb

STALL_AFTER = 300.0
MakeHost = Callable[..., Host]


@pytest.fixture
def make_host(store: MemoryStore, clock: ManualClock) -> Iterator[MakeHost]:
    hosts: list[Host] = []

    def make(on: MemoryStore | StoreProxy = store, **options: object) -> Host:
        host = Host(on, clock=clock, **options)  # type: ignore[arg-type]
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.stop(WAIT)


class BlockedLists(StoreProxy):
    """Lists wait until `release` is set: a cache that is still filling."""

    def __init__(self, inner: MemoryStore) -> None:
        super().__init__(inner)
        self.listing = threading.Event()
        self.release = threading.Event()

    def before(self, verb: Verb, res: Resource) -> None:
        if verb is Verb.LIST:
            self.listing.set()
            assert self.release.wait(WAIT)


def test_a_host_is_ready_once_started_with_its_caches_filled(
    store: MemoryStore, make_host: MakeHost
) -> None:
    blocked = BlockedLists(store)
    host = make_host(blocked, name="widgets")
    host.add_controller("widgets", lambda key: None, primary=host.informer(WIDGET))
    assert host.caches_problem() == "host widgets is new"
    starting = threading.Thread(target=host.start)
    starting.start()
    assert blocked.listing.wait(WAIT)
    assert "1 caches filling (informer of widgets.example.dev" in (host.caches_problem() or "")
    blocked.release.set()
    starting.join(WAIT)
    assert host.caches_problem() is None
    host.stop(WAIT)
    assert host.caches_problem() == "host widgets is stopped"


def test_a_standby_is_ready_and_idle(
    store: MemoryStore, clock: ManualClock, make_host: MakeHost
) -> None:
    hosts = []
    for identity in ("first", "second"):
        lease = LeaseConfig(name="lease", namespace="default", identity=identity)
        host = make_host(leader_election=lease, name=identity)
        host.add_controller("widgets", lambda key: None, primary=host.informer(WIDGET))
        host.start()
        assert host.wait_idle(WAIT)
        hosts.append(host)
    assert [h.is_leading for h in hosts] == [True, False]
    assert [h.caches_problem() for h in hosts] == [None, None]
    store.create(WIDGET, widget("a"))
    assert hosts[1].wait_idle(WAIT)
    clock.advance(STALL_AFTER * 2)
    assert hosts[1].stall_problem(STALL_AFTER) is None, "a paused queue is settled, not stalled"


def test_a_wedged_worker_fails_liveness_until_it_moves(
    clock: ManualClock, make_host: MakeHost
) -> None:
    unblock, entered = threading.Event(), threading.Event()

    def reconcile(key: Key) -> None:
        if key.name == "stuck":
            entered.set()
            assert unblock.wait(WAIT)

    host = make_host(workers=1, name="wedged")
    controller = host.add_controller("widgets", reconcile)
    host.start()
    controller.enqueue(Key("default", "stuck"))
    assert entered.wait(WAIT)
    controller.enqueue(Key("default", "waiting"))
    clock.advance(STALL_AFTER - 1)
    assert host.stall_problem(STALL_AFTER) is None
    clock.advance(1)
    problem = host.stall_problem(STALL_AFTER)
    assert problem == (
        "host wedged: 1 keys waiting, no worker progress for 300s (all 1 workers busy or gone)"
    )
    unblock.set()
    assert host.wait_idle(WAIT)
    assert host.stall_problem(STALL_AFTER) is None


@pytest.mark.parametrize(
    ("idle_before", "waiting", "stalled"),
    [(0.0, 5.0, 5.0), (1000.0, 0.0, 0.0), (1000.0, 7.0, 7.0)],
    ids=["fresh-queue", "work-arriving-after-a-long-idle-time", "idle-then-waiting"],
)
def test_stall_time_counts_from_when_work_arrived(
    clock: ManualClock, idle_before: float, waiting: float, stalled: float
) -> None:
    queue: WorkQueue[str] = WorkQueue(Timers(clock))
    clock.advance(idle_before)
    queue.add("a")
    clock.advance(waiting)
    assert queue.stalled_for() == stalled
    assert queue.get(0) == "a"
    assert queue.stalled_for() == 0.0


def test_reconciles_are_counted_by_kind_of_controller_and_result(
    clock: ManualClock, make_host: MakeHost
) -> None:
    outcomes: dict[str, Callable[[], Result | None]] = {
        "ok": lambda: None,
        "later": lambda: Result(requeue_after=60),
        "flaky": _raise(TransientError("try again")),
        "broken": _raise(InvalidInputError("bad")),
    }
    registry = CollectorRegistry()
    host = make_host(metrics=RuntimeMetrics(registry), name="agents")
    for cluster in ("ws/a", "ws/b"):
        controller = host.add_controller(f"agent:{cluster}", lambda key: outcomes[key.name]())
        for name in outcomes:
            controller.enqueue(Key("ns", name))
    host.start()
    assert host.wait_idle(WAIT)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    for result in ("success", "requeue", "retry", "error"):
        assert sample("bundler_reconcile_total", controller="agent", result=result) == 2
    assert sample("bundler_workqueue_retries_total", controller="agent") == 4
    assert sample("bundler_workqueue_queue_duration_seconds_count", controller="agent") == 8
    assert sample("bundler_workqueue_depth", queue="agents") == 0
    assert sample("bundler_leader", queue="agents") == 1


def _raise(error: Exception) -> Callable[[], None]:
    def fail() -> None:
        raise error

    return fail
