"""Watch fan-out for the in-memory store: event history, subscriptions, ordered delivery.

The store records every change here while holding its own lock, then calls `dispatch()` after
releasing it. Delivery happens on the writing thread, outside the store lock, one change at a time
in resourceVersion order for every watcher, even with concurrent writers: whoever holds the
dispatch lock drains the queue for everyone. A handler that writes to the store from inside a
callback does not recurse; its change is queued and delivered once the current callback returns.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from bundler.store.errors import Gone
from bundler.store.memory_meta import labels_match
from bundler.store.protocol import ErrorHandler, EventHandler, EventType, Obj, WatchEvent

log = logging.getLogger(__name__)

# (group, version, plural): how the store tells kinds apart.
KindKey = tuple[str, str, str]


@dataclass(frozen=True)
class Change:
    """One committed write. `obj` and `previous` are the store's own frozen dicts, never mutated."""

    rv: int
    kind: KindKey
    namespace: str
    type: EventType
    obj: Obj
    previous: Obj | None = None


class Subscription:
    """One watch: its filters, and the handlers it calls until stopped."""

    def __init__(
        self,
        hub: WatchHub,
        kind: KindKey,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        on_event: EventHandler,
        on_error: ErrorHandler | None,
        start_rv: int,
    ) -> None:
        self.kind = kind
        self.namespace = namespace
        self.start_rv = start_rv
        self._labels = dict(labels) if labels else None
        self._hub = hub
        self._on_event = on_event
        self._on_error = on_error
        self._active = True
        # Re-entrant so a handler may stop its own watch; held while calling back so that no
        # callback runs after stop() returns on another thread.
        self._lock = threading.RLock()

    def stop(self) -> None:
        with self._lock:
            self._active = False
        self._hub.unsubscribe(self)

    def deliver(self, change: Change) -> None:
        event_type = self._event_type(change)
        if event_type is None:
            return
        with self._lock:
            if not self._active:
                return
            try:
                self._on_event(WatchEvent(event_type, change.obj))  # frozen: shared
            except Exception:
                log.exception("watch handler failed on %s %s", event_type.value, self.kind)

    def fail(self, error: Exception) -> None:
        with self._lock:
            if not self._active:
                return
            self._active = False
            if self._on_error is None:
                return
            try:
                self._on_error(error)
            except Exception:
                log.exception("watch error handler failed for %s", self.kind)

    def _event_type(self, change: Change) -> EventType | None:
        """What this watcher sees: label-filtered watches see objects enter and leave the set."""
        if self._labels is None:
            return change.type
        now = labels_match(change.obj, self._labels)
        if change.type is not EventType.MODIFIED:
            return change.type if now else None
        before = change.previous is not None and labels_match(change.previous, self._labels)
        if before and now:
            return EventType.MODIFIED
        if now:
            return EventType.ADDED
        return EventType.DELETED if before else None


@dataclass(frozen=True)
class _Pending:
    change: Change
    # Set for replayed history, which goes to the one watch that asked for it.
    target: Subscription | None = None


class WatchHub:
    """History of recent changes plus the live subscriptions, indexed by kind and namespace."""

    def __init__(self, history_size: int) -> None:
        self._history_size = history_size
        self._history: deque[Change] = deque()
        # Watches may resume from any resourceVersion >= this one.
        self._floor = 0
        self._subscriptions: dict[KindKey, dict[str | None, list[Subscription]]] = {}
        self._pending: deque[_Pending] = deque()
        self._lock = threading.Lock()
        self._dispatch_lock = threading.Lock()
        self._dispatching_thread: int | None = None

    def record(self, change: Change) -> None:
        """Called by the store under its lock, in resourceVersion order."""
        with self._lock:
            self._history.append(change)
            while len(self._history) > self._history_size:
                self._floor = self._history.popleft().rv
            self._pending.append(_Pending(change))

    def subscribe(
        self,
        kind: KindKey,
        on_event: EventHandler,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        on_error: ErrorHandler | None,
        since: int | None,
        current_rv: int,
    ) -> Subscription:
        """Register a watch; called by the store under its lock so `current_rv` is exact.

        With `since`, the changes after it still in history are queued for this watch alone.
        """
        sub = Subscription(self, kind, namespace, labels, on_event, on_error, current_rv)
        with self._lock:
            if since is not None and since < self._floor:
                # kube-apiserver's words, with the oldest resourceVersion it could resume from.
                raise Gone(
                    f"too old resource version: {since} ({self._floor})",
                    obj=f"watch of {'/'.join(kind)}",
                )
            if since is not None:
                for change in self._replay(kind, namespace, since):
                    self._pending.append(_Pending(change, sub))
            self._subscriptions.setdefault(kind, {}).setdefault(namespace, []).append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            watchers = self._subscriptions.get(sub.kind, {}).get(sub.namespace, [])
            if sub in watchers:
                watchers.remove(sub)

    def fail_all(self, error: Exception) -> None:
        """End every watch with `error`, as a dropped connection would."""
        with self._lock:
            subs = [s for by_ns in self._subscriptions.values() for w in by_ns.values() for s in w]
            self._subscriptions.clear()
        for sub in subs:
            sub.fail(error)

    def compact(self, current_rv: int) -> None:
        """Forget all history, so that resuming from any older resourceVersion is Gone."""
        with self._lock:
            self._history.clear()
            self._floor = current_rv

    def dispatch(self) -> None:
        """Deliver queued changes; returns once the queue is empty (or at once inside a handler)."""
        if self._dispatching_thread == threading.get_ident():
            return
        with self._dispatch_lock:
            self._dispatching_thread = threading.get_ident()
            try:
                while (item := self._next()) is not None:
                    pending, watchers = item
                    for sub in watchers:
                        sub.deliver(pending.change)
            finally:
                self._dispatching_thread = None

    def _next(self) -> tuple[_Pending, list[Subscription]] | None:
        with self._lock:
            if not self._pending:
                return None
            pending = self._pending.popleft()
            if pending.target is not None:
                return pending, [pending.target]
            change = pending.change
            by_ns = self._subscriptions.get(change.kind, {})
            candidates = by_ns.get(change.namespace, []) + by_ns.get(None, [])
            return pending, [s for s in candidates if change.rv > s.start_rv]

    def _replay(self, kind: KindKey, namespace: str | None, since: int) -> list[Change]:
        replay: list[Change] = []
        for change in reversed(self._history):
            if change.rv <= since:
                break
            if change.kind == kind and namespace in (None, change.namespace):
                replay.append(change)
        replay.reverse()
        return replay
