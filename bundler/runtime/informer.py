"""Informer: a local cache of one kind, filled by list and kept current by watch, and its handlers.

The informer owns no thread. Watch events arrive on whatever thread the store delivers them (the
writer's thread for the in-memory store, the backend's stream thread for a real API server). When
a watch ends (Gone, a dropped connection) the informer relists on the host's timers, with backoff
if that fails, and hands its handlers synthetic ADDED/MODIFIED/DELETED events for whatever changed
meanwhile, so handlers see a level-consistent picture without ever missing a deletion.

The cache holds frozen objects (:mod:`bundler.store.frozen`): the in-memory store's own, shared
without a copy, or a real API server's, frozen once as they arrive. `get` and `list` return plain
copies, so callers may change what they get; `view` and `views` return the cached objects
themselves, read-only, for callers that only read. Handlers receive the cached object too.

An informer may keep an index: `index(obj)` names the group an object belongs to (None: none), and
`indexed(value)` returns that group's cached objects without scanning the cache, so a controller
that reads one group per reconcile stays linear in the objects it holds.
"""

from __future__ import annotations

import builtins
import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, cast

from bundler.api.resources import Resource
from bundler.runtime.backoff import ExponentialBackoff
from bundler.runtime.key import Key
from bundler.runtime.timers import Timer, Timers
from bundler.store.frozen import freeze
from bundler.store.memory_meta import labels_match
from bundler.store.mergepatch import json_copy
from bundler.store.protocol import EventType, Obj, ObjectList, Store, Watch, WatchEvent

log = logging.getLogger(__name__)

Handler = Callable[[EventType, Obj], None]
# The index value of an object (None: not indexed).
IndexFunc = Callable[[Mapping[str, Any]], str | None]
Event = tuple[EventType, Obj]

RELIST_BACKOFF_BASE = 0.8
RELIST_BACKOFF_CAP = 30.0
_RELIST = "relist"


class Informer:
    def __init__(
        self,
        store: Store,
        res: Resource,
        timers: Timers,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        index: IndexFunc | None = None,
    ) -> None:
        self.store = store
        self.res = res
        self.namespace = namespace
        self.labels = dict(labels) if labels else None
        self._timers = timers
        self._backoff: ExponentialBackoff[str] = ExponentialBackoff(
            RELIST_BACKOFF_BASE, RELIST_BACKOFF_CAP
        )
        self._lock = threading.Lock()
        self._synced_cond = threading.Condition(self._lock)
        self._cache: dict[Key, Obj] = {}
        self._index_of = index
        # Index value -> the keys of the cached objects it indexes (kept with `_cache`).
        self._index: dict[str, dict[Key, None]] = {}
        self._handlers: dict[int, Handler] = {}
        self._handler_ids = itertools.count()
        # Bumped by every (re)list; events of a watch from an older generation are ignored.
        self._generation = 0
        self._watch: Watch | None = None
        self._relist_timer: Timer | None = None
        self._started = False
        self._synced = False
        # True from a watch ending until a new one runs: failures meanwhile back off.
        self._relisting = False

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        labels = f" with labels {self.labels}" if self.labels else ""
        return f"informer of {self.res}{where}{labels}"

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """List (store errors propagate: the cache cannot start), then watch from that list."""
        with self._lock:
            if self._started:
                return
            self._started = True
            generation = self._new_generation()
        try:
            listed = self._list()
        except BaseException:
            with self._lock:
                self._started = False
            raise
        self._apply_list(generation, listed)
        self._watch_from(generation, listed.resource_version)

    def stop(self) -> None:
        """End the watch; events that still arrive are ignored."""
        with self._lock:
            self._started = False
            self._new_generation()
            watch, self._watch = self._watch, None
            timer, self._relist_timer = self._relist_timer, None
        if timer is not None:
            timer.cancel()
        # Outside our lock: the store may be delivering to us and waiting for it.
        if watch is not None:
            watch.stop()

    @property
    def has_synced(self) -> bool:
        return self._synced

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        with self._lock:
            return self._synced_cond.wait_for(lambda: self._synced, timeout)

    # -- reads --------------------------------------------------------------------------------

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """A copy of the cached object, or None; namespace None (or "") if cluster-scoped."""
        found = self.view(namespace, name)
        return None if found is None else _copy(found)

    def shared(self, namespace: str | None, name: str) -> Obj | None:
        """The cached object itself, for a caller that only reads it or copies it before a
        write (it is frozen: changing it raises TypeError), or None; `get` without the copy."""
        found = self.view(namespace, name)
        return None if found is None else cast(Obj, found)

    def view(self, namespace: str | None, name: str) -> Mapping[str, Any] | None:
        """The cached object itself (read-only: changing it raises TypeError), or None."""
        with self._lock:
            return self._cache.get(Key(namespace or "", name))

    def list(
        self, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        """Copies of the cached objects in `namespace` (all when None) carrying all of `labels`."""
        return [_copy(obj) for obj in self.views(namespace, labels)]

    def views(
        self, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> builtins.list[Mapping[str, Any]]:
        """The cached objects themselves (read-only), selected as `list` selects them."""
        with self._lock:
            return [
                obj
                for key, obj in self._cache.items()
                if namespace is None or key.namespace == namespace
                if labels_match(obj, labels)
            ]

    def indexed(self, value: str) -> builtins.list[Mapping[str, Any]]:
        """The cached objects (read-only) whose index value is `value`, in the order cached."""
        with self._lock:
            keys = self._index.get(value, {})
            return [self._cache[key] for key in keys]

    def list_keys(self) -> builtins.list[Key]:
        with self._lock:
            return list(self._cache)

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    # -- handlers -----------------------------------------------------------------------------

    def add_handler(self, handler: Handler) -> int:
        """Call `handler(event_type, obj)` on every change; once synced, replays the cache as ADDED.

        Returns an id for `remove_handler`.
        """
        with self._lock:
            handler_id = next(self._handler_ids)
            self._handlers[handler_id] = handler
            replay = [(EventType.ADDED, obj) for obj in self._cache.values()]
        _dispatch([handler], replay)
        return handler_id

    def remove_handler(self, handler_id: int) -> None:
        with self._lock:
            self._handlers.pop(handler_id, None)

    def handler_count(self) -> int:
        with self._lock:
            return len(self._handlers)

    # -- list and watch -----------------------------------------------------------------------

    def _new_generation(self) -> int:
        self._generation += 1
        return self._generation

    def _list(self) -> ObjectList:
        return self.store.list(self.res, namespace=self.namespace, labels=self.labels)

    def _apply_list(self, generation: int, listed: ObjectList) -> None:
        """Replace the cache with a fresh list, telling handlers what differs from before."""
        fresh = {Key.of(obj): _frozen(obj) for obj in listed.items}
        with self._lock:
            if generation != self._generation:
                return
            events = _diff(self._cache, fresh)
            self._cache = fresh
            self._reindex()
            self._synced = True
            self._synced_cond.notify_all()
            handlers = list(self._handlers.values())
        _dispatch(handlers, events)

    def _watch_from(self, generation: int, resource_version: str) -> None:
        try:
            watch = self.store.watch(
                self.res,
                partial(self._on_event, generation),
                namespace=self.namespace,
                labels=self.labels,
                resource_version=resource_version,
                on_error=partial(self._on_watch_error, generation),
            )
        except Exception as error:
            self._on_watch_error(generation, error)
            return
        with self._lock:
            current = generation == self._generation
            if current:
                self._watch = watch
                self._relisting = False
        if current:
            self._backoff.forget(_RELIST)
        else:
            watch.stop()

    def _on_event(self, generation: int, event: WatchEvent) -> None:
        obj = _frozen(event.object)
        key = Key.of(obj)
        with self._lock:
            if generation != self._generation:
                return
            before = self._cache.get(key)
            if event.type is EventType.DELETED:
                self._cache.pop(key, None)
                self._reindex_one(key, before, None)
            else:
                self._cache[key] = obj
                self._reindex_one(key, before, obj)
            handlers = list(self._handlers.values())
        _dispatch(handlers, [(event.type, obj)])

    def _reindex(self) -> None:
        """Rebuild the index from the cache (caller holds the lock)."""
        self._index = {}
        for key, obj in self._cache.items():
            self._reindex_one(key, None, obj)

    def _reindex_one(self, key: Key, before: Obj | None, after: Obj | None) -> None:
        """Move `key` in the index from `before`'s value to `after`'s (caller holds the lock);
        an object whose value stays keeps its place, as it keeps its place in the cache."""
        if self._index_of is None:
            return
        old = None if before is None else self._index_of(before)
        new = None if after is None else self._index_of(after)
        if old == new:
            return
        if old is not None and (keys := self._index.get(old)) is not None:
            keys.pop(key, None)
            if not keys:
                del self._index[old]
        if new is not None:
            self._index.setdefault(new, {})[key] = None

    def _on_watch_error(self, generation: int, error: Exception) -> None:
        """The watch ended: relist now, or after a growing delay while relisting keeps failing."""
        with self._lock:
            if generation != self._generation or not self._started:
                return
            delay = self._backoff.next_delay(_RELIST) if self._relisting else 0.0
            self._relisting = True
            self._relist_timer = self._timers.call_later(delay, self._relist)
        log.info("%s: watch ended (%s); relisting in %.1fs", self, error, delay)

    def _relist(self) -> None:
        with self._lock:
            if not self._started:
                return
            generation = self._new_generation()
            watch, self._watch = self._watch, None
            self._relist_timer = None
        if watch is not None:
            watch.stop()
        try:
            listed = self._list()
        except Exception as error:
            self._on_watch_error(generation, error)
            return
        self._apply_list(generation, listed)
        self._watch_from(generation, listed.resource_version)


def _diff(old: dict[Key, Obj], fresh: dict[Key, Obj]) -> list[Event]:
    """Events that turn `old` into `fresh`; unchanged resourceVersions are skipped."""
    events: list[Event] = []
    for key, obj in fresh.items():
        before = old.get(key)
        if before is None:
            events.append((EventType.ADDED, obj))
        elif _resource_version(before) != _resource_version(obj):
            events.append((EventType.MODIFIED, obj))
    events.extend((EventType.DELETED, obj) for key, obj in old.items() if key not in fresh)
    return events


def _resource_version(obj: Obj) -> str | None:
    rv: str | None = obj.get("metadata", {}).get("resourceVersion")
    return rv


def _copy(obj: Mapping[str, Any]) -> Obj:
    copied: Obj = json_copy(obj)
    return copied


def _frozen(obj: Obj) -> Obj:
    """The object as the cache keeps it: the in-memory store's are frozen already (no copy)."""
    frozen: Obj = freeze(obj)
    return frozen


def _dispatch(handlers: list[Handler], events: list[Event]) -> None:
    for event_type, obj in events:
        for handler in handlers:
            try:
                handler(event_type, obj)
            except Exception:
                log.exception("informer handler %r failed on %s", handler, event_type.value)
