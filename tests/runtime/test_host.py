"""The host: many controllers on few threads, retries with backoff, requeues, resync, clean stop."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from bundler.errors import InvalidInputError, TransientError
from bundler.runtime.clock import ManualClock
from bundler.runtime.controller import QueueItem, Result
from bundler.runtime.host import Host, HostState
from bundler.runtime.key import Key
from bundler.store.memory import MemoryStore
from tests.support.runtime.widgets import WAIT, WIDGET, widget

MakeHost = Callable[..., Host]


@pytest.fixture
def make_host(store: MemoryStore) -> Iterator[MakeHost]:
    """Hosts over the test store, all stopped at the end of the test."""
    hosts: list[Host] = []

    def make(**options: object) -> Host:
        host = Host(store, **options)  # type: ignore[arg-type]
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.stop(WAIT)


class Recorder:
    """A reconcile function that records the keys it was called with."""

    def __init__(self, result: Result | None = None) -> None:
        self.calls: Counter[Key] = Counter()
        self.result = result
        self._lock = threading.Lock()

    def __call__(self, key: Key) -> Result | None:
        with self._lock:
            self.calls[key] += 1
        return self.result


def test_a_thousand_controllers_share_a_small_pool(store: MemoryStore, make_host: MakeHost) -> None:
    threads_before = threading.active_count()
    host = make_host(workers=4)
    recorders = [Recorder() for _ in range(1000)]
    for index, recorder in enumerate(recorders):
        informer = host.informer(WIDGET, namespace=f"ns-{index}")
        host.add_controller(f"agent-{index}", recorder, primary=informer)
    host.start()
    assert threading.active_count() <= threads_before + 4 + 1, "4 workers and 1 timer thread"
    for index in range(1000):
        store.create(WIDGET, widget("app", f"ns-{index}"))
    assert host.wait_idle(WAIT)
    assert all(r.calls == {Key(f"ns-{i}", "app"): 1} for i, r in enumerate(recorders))
    assert threading.active_count() <= threads_before + 4 + 1


def test_shared_informers_are_one_per_kind_namespace_and_labels(make_host: MakeHost) -> None:
    host = make_host()
    first = host.informer(WIDGET, "ns", {"a": "1"})
    assert host.informer(WIDGET, "ns", {"a": "1"}) is first
    assert host.informer(WIDGET, "ns") is not first
    assert host.informer(WIDGET, "other", {"a": "1"}) is not first


@pytest.mark.parametrize(
    ("error", "level", "traceback"),
    [
        (TransientError("registry unreachable"), logging.INFO, False),
        (InvalidInputError("bad chart version"), logging.WARNING, False),
        (KeyError("bug"), logging.ERROR, True),
    ],
    ids=["transient-quietly", "invalid-warns", "unexpected-with-traceback"],
)
def test_failing_reconciles_are_retried_with_growing_backoff(
    store: MemoryStore,
    make_host: MakeHost,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
    level: int,
    traceback: bool,
) -> None:
    clock = ManualClock()
    host = make_host(clock=clock, backoff_base=1.0, backoff_cap=60.0)
    calls: list[float] = []

    def reconcile(key: Key) -> None:
        calls.append(clock.monotonic())
        if len(calls) <= 3:
            raise error

    host.add_controller("flaky", reconcile, primary=host.informer(WIDGET))
    host.start()
    with caplog.at_level(logging.INFO, logger="bundler.runtime.controller"):
        store.create(WIDGET, widget("a"))
        for step in [0.0, 1.0, 2.0, 4.0, 8.0]:
            clock.advance(step)
            assert host.wait_idle(WAIT)
    assert calls == [0.0, 1.0, 3.0, 7.0], "retried after 1s, 2s, 4s; then done"
    assert host.queue.failures(QueueItem("flaky", Key("default", "a"))) == 0, "success forgets"
    failures = [r for r in caplog.records if "default/a" in r.getMessage()]
    assert [(r.levelno, r.exc_info is not None) for r in failures] == [(level, traceback)] * 3


def test_requeue_after_reconciles_again_later(store: MemoryStore, make_host: MakeHost) -> None:
    clock = ManualClock()
    host = make_host(clock=clock)
    recorder = Recorder(Result(requeue_after=30))
    host.add_controller("poll", recorder, primary=host.informer(WIDGET))
    host.start()
    store.create(WIDGET, widget("a"))
    assert host.wait_idle(WAIT)
    clock.advance(29)
    assert host.wait_idle(WAIT)
    assert recorder.calls[Key("default", "a")] == 1
    clock.advance(1)
    assert host.wait_idle(WAIT)
    assert recorder.calls[Key("default", "a")] == 2


def test_resync_reconciles_every_cached_object(store: MemoryStore, make_host: MakeHost) -> None:
    clock = ManualClock()
    host = make_host(clock=clock)
    recorder = Recorder()
    host.add_controller("resync", recorder, primary=host.informer(WIDGET), resync_period=600)
    for name in ["a", "b"]:
        store.create(WIDGET, widget(name))
    host.start()
    assert host.wait_idle(WAIT)
    for _ in range(2):
        clock.advance(600)
        assert host.wait_idle(WAIT)
    assert recorder.calls == {Key("default", "a"): 3, Key("default", "b"): 3}


def test_secondary_watches_map_objects_to_other_keys(
    store: MemoryStore, make_host: MakeHost
) -> None:
    host = make_host()
    recorder = Recorder()
    controller = host.add_controller("owner", recorder)
    controller.watch(
        host.informer(WIDGET, "children"),
        lambda obj: [Key("owners", obj["metadata"]["labels"]["owner"])],
    )
    host.start()
    store.create(WIDGET, widget("child-1", "children", owner="parent"))
    store.create(WIDGET, widget("child-2", "children", owner="parent"))
    assert host.wait_idle(WAIT)
    assert set(recorder.calls) == {Key("owners", "parent")}


def test_controllers_added_while_running_see_existing_objects(
    store: MemoryStore, make_host: MakeHost
) -> None:
    host = make_host()
    host.start()
    store.create(WIDGET, widget("a"))
    recorder = Recorder()
    host.add_controller("late", recorder, primary=host.informer(WIDGET))
    assert host.wait_idle(WAIT)
    assert recorder.calls == {Key("default", "a"): 1}


def test_removed_controller_stops_and_unwatched_informers_stop(
    store: MemoryStore, make_host: MakeHost
) -> None:
    host = make_host()
    shared, own = host.informer(WIDGET, "shared"), host.informer(WIDGET, "own")
    kept, removed = Recorder(), Recorder()
    host.add_controller("kept", kept, primary=shared)
    controller = host.add_controller("removed", removed, primary=shared)
    controller.watch(own)
    host.start()
    host.remove_controller("removed")
    store.create(WIDGET, widget("a", "shared"))
    store.create(WIDGET, widget("b", "own"))
    assert host.wait_idle(WAIT)
    assert (kept.calls, removed.calls) == ({Key("shared", "a"): 1}, Counter())
    assert host.informer(WIDGET, "shared") is shared
    assert host.informer(WIDGET, "own") is not own, "the unwatched informer was dropped"


def test_duplicate_controller_names_are_refused(make_host: MakeHost) -> None:
    host = make_host()
    host.add_controller("same", Recorder())
    with pytest.raises(ValueError, match="same"):
        host.add_controller("same", Recorder())


def test_stop_lets_the_current_reconcile_finish(store: MemoryStore, make_host: MakeHost) -> None:
    threads_before = threading.active_count()
    host = make_host(workers=2)
    started, release = threading.Event(), threading.Event()
    finished: list[Key] = []

    def slow(key: Key) -> None:
        started.set()
        release.wait(WAIT)
        finished.append(key)

    host.add_controller("slow", slow, primary=host.informer(WIDGET))
    host.start()
    store.create(WIDGET, widget("a"))
    assert started.wait(WAIT)
    stopper = threading.Thread(target=host.stop)
    stopper.start()
    release.set()
    stopper.join(WAIT)
    assert (finished, host.state) == ([Key("default", "a")], HostState.STOPPED)
    assert threading.active_count() == threads_before
    store.create(WIDGET, widget("b"))
    assert finished == [Key("default", "a")], "nothing reconciles after stop"


def test_a_host_starts_only_once(make_host: MakeHost) -> None:
    host = make_host()
    host.start()
    host.stop()
    with pytest.raises(RuntimeError, match="only once"):
        host.start()
