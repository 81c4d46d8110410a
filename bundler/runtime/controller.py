"""A controller: a named, level-triggered reconcile function, the informers that wake it, and what
happens after each run.

`reconcile(key)` looks at the world as it is now and moves it one step toward what it should be. It
returns `Result()` (or None) when done, `Result(requeue_after=s)` to look again later, or raises:
a TransientError is retried with per-key backoff quietly, another BundlerError is retried with a
warning, anything else is logged with its traceback and retried too. The worker always survives.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from bundler.errors import BundlerError, TransientError
from bundler.observe.logs import about
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.runtime.metrics import (
    RESULT_ERROR,
    RESULT_REQUEUE,
    RESULT_RETRY,
    RESULT_SUCCESS,
    RuntimeMetrics,
)
from bundler.runtime.queue import WorkQueue
from bundler.runtime.timers import Timer, Timers
from bundler.store.protocol import EventType, Obj

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """`requeue_after`: reconcile the key again after so many clock seconds."""

    requeue_after: float | None = None


Reconcile = Callable[[Key], Result | None]
KeyMapper = Callable[[Obj], Iterable[Key]]


@dataclass(frozen=True)
class QueueItem:
    """A key qualified by its controller: many controllers share one host queue."""

    controller: str
    key: Key


def own_key(obj: Obj) -> Iterable[Key]:
    """The mapper of a primary informer: an object wakes its own key."""
    return (Key.of(obj),)


class Controller:
    """One reconcile function on the host's shared queue.

    `primary` is the informer a resync re-enqueues; whoever creates the controller also `watch()`es
    it (the host does, once the name is taken). `kind` is the kind of object its keys name (default:
    the primary informer's), for log lines.
    """

    def __init__(
        self,
        name: str,
        reconcile: Reconcile,
        queue: WorkQueue[QueueItem],
        timers: Timers,
        *,
        primary: Informer | None = None,
        resync_period: float | None = None,
        kind: str | None = None,
        metrics: RuntimeMetrics | None = None,
    ) -> None:
        if resync_period is not None and (primary is None or resync_period <= 0):
            raise ValueError(
                f"controller {name}: resync_period needs a primary informer and a positive period"
            )
        self.name = name
        self.primary = primary
        self.resync_period = resync_period
        self.kind = kind or (primary.res.kind if primary is not None else "")
        self._metrics = metrics
        self._reconcile = reconcile
        self._queue = queue
        self._timers = timers
        self._handlers: list[tuple[Informer, int]] = []
        self._resync_timer: Timer | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def enqueue(self, key: Key) -> None:
        self._queue.add(QueueItem(self.name, key))

    def enqueue_after(self, key: Key, delay: float) -> None:
        self._queue.add_after(QueueItem(self.name, key), delay)

    def watch(self, informer: Informer, to_keys: KeyMapper = own_key) -> None:
        """Enqueue `to_keys(obj)` for every event of `informer` (default: the object's own key)."""

        def on_event(_: EventType, obj: Obj) -> None:
            for key in to_keys(obj):
                self.enqueue(key)

        self._handlers.append((informer, informer.add_handler(on_event)))

    def informers(self) -> list[Informer]:
        return [informer for informer, _ in self._handlers]

    def start(self) -> None:
        with self._lock:
            self._stopped = False
            self._schedule_resync()

    def stop(self) -> None:
        """Detach from the informers and stop resyncing; the host drops keys already queued."""
        with self._lock:
            self._stopped = True
            if self._resync_timer is not None:
                self._resync_timer.cancel()
                self._resync_timer = None
        for informer, handler_id in self._handlers:
            informer.remove_handler(handler_id)

    def process(self, key: Key) -> None:
        """Reconcile `key` once and schedule its next run: never raises."""
        clock = self._timers.clock
        started = clock.monotonic()
        with about(controller=self.name, kind=self.kind, namespace=key.namespace, name=key.name):
            result = self._process(key)
        if self._metrics is not None:
            self._metrics.reconciled(self.name, result, clock.monotonic() - started)

    def _process(self, key: Key) -> str:
        """Reconcile, requeue as the outcome asks, and say which result it was."""
        item = QueueItem(self.name, key)
        try:
            result = self._reconcile(key) or Result()
        except TransientError as error:
            delay = self._queue.add_rate_limited(item)
            log.info("%s %s: %s (retry in %.3gs)", self.name, key, error, delay)
            return RESULT_RETRY
        except BundlerError as error:
            delay = self._queue.add_rate_limited(item)
            log.warning("%s %s: %s (retry in %.3gs)", self.name, key, error, delay)
            return RESULT_ERROR
        except Exception:
            delay = self._queue.add_rate_limited(item)
            log.exception("%s %s: reconcile failed (retry in %.3gs)", self.name, key, delay)
            return RESULT_ERROR
        self._queue.forget(item)
        if result.requeue_after is None:
            return RESULT_SUCCESS
        self._queue.add_after(item, result.requeue_after)
        return RESULT_REQUEUE

    def _schedule_resync(self) -> None:
        if self.primary is not None and self.resync_period is not None and not self._stopped:
            self._resync_timer = self._timers.call_later(
                self.resync_period, partial(self._resync, self.primary)
            )

    def _resync(self, primary: Informer) -> None:
        """Re-enqueue every object of the primary informer, catching anything events missed."""
        for key in primary.list_keys():
            self.enqueue(key)
        with self._lock:
            self._schedule_resync()
