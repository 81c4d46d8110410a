"""The host: runs any number of controllers on one pool of worker threads, one timer thread and
shared informers, optionally only while holding a leader Lease.

All controllers share one work queue of (controller, key) items, so a thousand mostly idle agents
cost a thousand small dicts, not a thousand threads; idle workers block on the queue's condition.
Workers hand out keys only once started and while leading (always, without leader election);
informers keep their caches current either way, so a new leader starts from a warm cache.

For probes, a host says why it is not ready (`caches_problem()`: not started, caches filling) and
whether its workers have made no progress while keys wait (`stall_problem()`); with `metrics` it
reports reconciles and its queue (bundler.runtime.metrics). `stop(timeout)` gives in-flight
reconciles `timeout` seconds in all, then releases the Lease.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from enum import Enum

from bundler.api.resources import Resource
from bundler.runtime.backoff import DEFAULT_BASE, DEFAULT_CAP, ExponentialBackoff
from bundler.runtime.clock import Clock, SystemClock
from bundler.runtime.controller import Controller, QueueItem, Reconcile
from bundler.runtime.informer import Informer
from bundler.runtime.leader import LeaderElector, LeaseConfig
from bundler.runtime.metrics import RuntimeMetrics
from bundler.runtime.queue import WorkQueue
from bundler.runtime.timers import Timers
from bundler.store.protocol import Store

log = logging.getLogger(__name__)

InformerKey = tuple[Resource, str | None, frozenset[tuple[str, str]]]

DEFAULT_WORKERS = 4
DEFAULT_STOP_TIMEOUT = 30.0


class HostState(Enum):
    NEW = "new"
    RUNNING = "running"
    STOPPED = "stopped"


class Host:
    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        workers: int = DEFAULT_WORKERS,
        leader_election: LeaseConfig | None = None,
        backoff_base: float = DEFAULT_BASE,
        backoff_cap: float = DEFAULT_CAP,
        name: str = "host",
        metrics: RuntimeMetrics | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"host {name}: needs at least one worker, got {workers}")
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.name = name
        self.timers = Timers(self.clock)
        self.metrics = metrics
        self.queue: WorkQueue[QueueItem] = WorkQueue(
            self.timers,
            ExponentialBackoff(backoff_base, backoff_cap),
            paused=True,
            on_taken=None
            if metrics is None
            else lambda item, s: metrics.waited(item.controller, s),
        )
        self._worker_count = workers
        self._workers: list[threading.Thread] = []
        self._informers: dict[InformerKey, Informer] = {}
        self._controllers: dict[str, Controller] = {}
        self._lock = threading.Lock()
        self._state = HostState.NEW
        self._elector = (
            None
            if leader_election is None
            else LeaderElector(
                store,
                leader_election,
                self.clock,
                on_started_leading=self.queue.resume,
                on_stopped_leading=self.queue.pause,
            )
        )
        if metrics is not None:
            metrics.watch_host(self)

    # -- wiring -------------------------------------------------------------------------------

    def informer(
        self, res: Resource, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> Informer:
        """The host's one informer for this kind, namespace and labels; started if the host runs."""
        key: InformerKey = (res, namespace or None, frozenset((labels or {}).items()))
        with self._lock:
            informer = self._informers.get(key)
            if informer is None:
                informer = Informer(
                    self.store, res, self.timers, namespace=namespace or None, labels=labels
                )
                self._informers[key] = informer
            running = self._state is HostState.RUNNING
        if running:
            informer.start()
        return informer

    def add_controller(
        self,
        name: str,
        reconcile: Reconcile,
        *,
        primary: Informer | None = None,
        resync_period: float | None = None,
        kind: str | None = None,
    ) -> Controller:
        """Host `reconcile` as `name`, woken by events of `primary` and of informers it watches;
        `kind` names what its keys are in log lines (default: the primary informer's kind)."""
        controller = Controller(
            name,
            reconcile,
            self.queue,
            self.timers,
            primary=primary,
            resync_period=resync_period,
            kind=kind,
            metrics=self.metrics,
        )
        with self._lock:
            if name in self._controllers:
                raise ValueError(f"host {self.name}: a controller named {name!r} already runs")
            self._controllers[name] = controller
            running = self._state is HostState.RUNNING
        # Only now that workers can find the controller may its keys be queued.
        if primary is not None:
            controller.watch(primary)
        if running:
            controller.start()
        return controller

    def remove_controller(self, name: str) -> None:
        """Stop `name`, drop its queued keys, and stop informers that no one watches any more."""
        with self._lock:
            controller = self._controllers.pop(name, None)
        if controller is None:
            return
        controller.stop()
        for informer in controller.informers():
            self._drop_if_unwatched(informer)

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start timers and workers, fill the caches (store errors propagate), then reconcile."""
        with self._lock:
            if self._state is not HostState.NEW:
                raise RuntimeError(f"host {self.name} is {self._state.value}: it starts only once")
            self._state = HostState.RUNNING
            informers = list(self._informers.values())
            controllers = list(self._controllers.values())
        try:
            self.timers.start()
            for informer in informers:
                informer.start()
            for controller in controllers:
                controller.start()
            self._start_workers()
        except BaseException:
            self.stop()
            raise
        if self._elector is None:
            self.queue.resume()
        else:
            self._elector.start(self.timers)
        log.info(
            "host %s: started %d controllers on %d workers",
            self.name,
            len(controllers),
            self._worker_count,
        )

    def stop(self, timeout: float | None = DEFAULT_STOP_TIMEOUT) -> None:
        """Take no more work, give the reconciles running now `timeout` real seconds in all to
        finish, stop timers and watches, then release the lease."""
        with self._lock:
            if self._state is HostState.STOPPED:
                return
            self._state = HostState.STOPPED
            workers, self._workers = self._workers, []
            informers = list(self._informers.values())
        deadline = None if timeout is None else time.monotonic() + timeout
        self.queue.shutdown()
        for worker in workers:
            worker.join(_remaining(deadline))
            if worker.is_alive():
                log.warning("host %s: %s still busy after %ss", self.name, worker.name, timeout)
        if self._elector is not None:
            self._elector.stop()
        self.timers.stop(_remaining(deadline))
        for informer in informers:
            informer.stop()
        if self._elector is not None:
            self._elector.release()

    @property
    def state(self) -> HostState:
        return self._state

    @property
    def is_leading(self) -> bool:
        return self._elector is None or self._elector.is_leading

    # -- probes -------------------------------------------------------------------------------

    def caches_problem(self) -> str | None:
        """Why the host is not ready yet (not started, caches not filled, stopped), or None.

        Not leading is no problem: a standby keeps its caches current, ready to take over.
        """
        with self._lock:
            state = self._state
            informers = list(self._informers.values())
        if state is not HostState.RUNNING:
            return f"host {self.name} is {state.value}"
        filling = [str(informer) for informer in informers if not informer.has_synced]
        if filling:
            return f"host {self.name}: {len(filling)} caches filling ({filling[0]}, ...)"
        return None

    def stall_problem(self, threshold: float) -> str | None:
        """None unless keys have waited `threshold` clock seconds with no worker progress."""
        stalled = self.queue.stalled_for()
        if stalled < threshold:
            return None
        return (
            f"host {self.name}: {len(self.queue)} keys waiting, no worker progress for "
            f"{stalled:.0f}s (all {self._worker_count} workers busy or gone)"
        )

    def stalled_for(self) -> float:
        """Clock seconds keys have waited while no worker made progress (0: not stalled)."""
        return self.queue.stalled_for()

    def queue_depth(self) -> int:
        return len(self.queue)

    def in_flight(self) -> int:
        return self.queue.processing()

    # -- settling -----------------------------------------------------------------------------

    def is_idle(self, horizon: float = 0.0) -> bool:
        """Nothing processing, nothing queued that could run, no timer due within `horizon` seconds.

        A queue paused by a lost (or not yet won) lease counts as settled.
        """
        with self.timers.monitor.lock:
            return self.queue.is_idle() and self.timers.is_idle(horizon)

    def wait_idle(self, timeout: float | None = None, horizon: float = 0.0) -> bool:
        """Block until `is_idle(horizon)` (False after `timeout` real seconds)."""
        return self.timers.monitor.wait_for(lambda: self.is_idle(horizon), timeout)

    # -- internals ----------------------------------------------------------------------------

    def _start_workers(self) -> None:
        for index in range(self._worker_count):
            worker = threading.Thread(
                target=self._work, name=f"{self.name}-worker-{index}", daemon=True
            )
            with self._lock:
                self._workers.append(worker)
            worker.start()

    def _work(self) -> None:
        while (item := self.queue.get()) is not None:
            try:
                controller = self._controllers.get(item.controller)
                if controller is None:
                    self.queue.forget(item)
                else:
                    controller.process(item.key)
            finally:
                self.queue.done(item)

    def _drop_if_unwatched(self, informer: Informer) -> None:
        with self._lock:
            if informer.handler_count():
                return
            for key, known in list(self._informers.items()):
                if known is informer:
                    del self._informers[key]
        informer.stop()


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())
