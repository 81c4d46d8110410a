"""The in-memory store: the Store protocol with the Kubernetes API server's semantics.

Objects live in an index by kind, namespace and name, so every operation costs what the objects of
one kind (and namespace) cost, never the whole store. Stored objects are frozen
(:mod:`bundler.store.frozen`): a write builds a new object and freezes it once, and nothing stored
can be changed, so history and every watcher share it without copying. What a read or a write
returns is a plain copy the caller may change.

Semantics kept from Kubernetes: a global monotonic resourceVersion, 409 on a stale one, generation
bumped by changes outside metadata and status, the status subresource, no-op writes that change
nothing, finalizers and deletionTimestamp, background cascading deletion by ownerReferences and
by namespace, label-filtered watches resumable from a resourceVersion still in history (else Gone).
"""

from __future__ import annotations

import os
import random
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from bundler.api.resources import NAMESPACE, Resource
from bundler.store.errors import AlreadyExists, Forbidden, Invalid, KindNotServed, NotFound
from bundler.store.frozen import freeze
from bundler.store.memory_meta import (
    describe,
    generated_name,
    labels_match,
    owner_uids,
    rfc3339,
    validate_metadata,
    validate_name,
    validate_namespace_name,
)
from bundler.store.memory_watch import Change, KindKey, WatchHub
from bundler.store.memory_writes import (
    check_precondition,
    marked_for_deletion,
    new_object,
    same,
    spec_write,
    status_write,
)
from bundler.store.mergepatch import json_copy, merged_sharing
from bundler.store.protocol import ErrorHandler, EventHandler, EventType, Obj, ObjectList, Watch

# Where one object lives: kind, namespace ("" for cluster-scoped kinds), name.
Location = tuple[KindKey, str, str]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _kind_key(res: Resource) -> KindKey:
    return (res.group, res.version, res.plural)


def _copy(obj: Obj) -> Obj:
    copied: Obj = json_copy(obj)
    return copied


def _writable(body: Mapping[str, Any]) -> Obj:
    """A write's body as the write path may change it: its top level and its metadata, which
    are all a write changes in place. The rest is the caller's until `_put` freezes it (a copy of
    whatever is not frozen yet), so nothing stored aliases what the caller holds."""
    writable = dict(body)
    meta = writable.get("metadata")
    if isinstance(meta, Mapping):
        writable["metadata"] = dict(meta)
    return writable


class MemoryStore:
    """A thread-safe, in-process Kubernetes API. See the module docstring for the semantics.

    `require_namespaces`: creating a namespaced object needs its Namespace object to exist (the
    test API server turns this on; in-process users may skip creating Namespaces). Creating in a
    terminating Namespace is refused either way. `served`: the kinds this store serves (default:
    every kind), others raise KindNotServed. `history_size`: how many recent changes a watch can
    resume from.

    Watch handlers run synchronously on the writing thread after the write, outside the store
    lock, in resourceVersion order, and receive the stored (frozen, read-only) object itself.
    `watch()` raises Gone itself when the resourceVersion is too old; `on_error` is only called by
    `fail_watches()`, which simulates dropped connections.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = _utc_now,
        require_namespaces: bool = False,
        served: Iterable[Resource] | None = None,
        history_size: int = 10_000,
    ) -> None:
        self._clock = clock
        self._require_namespaces = require_namespaces
        self._served = None if served is None else {_kind_key(r) for r in served}
        self._lock = threading.Lock()
        self._rv = 0
        self._objects: dict[KindKey, dict[str, dict[str, Obj]]] = {}
        self._resources: dict[KindKey, Resource] = {}
        self._uids: dict[str, Location] = {}
        self._dependents: dict[str, set[Location]] = {}
        self._hub = WatchHub(history_size)
        # uids need to be unique, not secret: one draw from the OS seeds them, instead of a system
        # call per object made while the write lock is held.
        self._uid_source = random.Random(os.urandom(16))

    # -- reads --------------------------------------------------------------------------------

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        with self._lock:
            stored = self._get_locked(res, name, self._scope(res, namespace, name))
        return _copy(stored)

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> ObjectList:
        self._check_served(res)
        with self._lock:
            by_ns = self._objects.get(_kind_key(res), {})
            buckets = [by_ns.get(namespace, {})] if namespace and res.namespaced else by_ns.values()
            found = [o for bucket in buckets for o in bucket.values() if labels_match(o, labels)]
            rv = str(self._rv)
        found.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return ObjectList(items=[_copy(obj) for obj in found], resource_version=rv)

    # -- writes -------------------------------------------------------------------------------

    def create(self, res: Resource, obj: Obj) -> Obj:
        with self._writing():
            created = self._create_locked(res, obj)
        return _copy(created)

    def update(self, res: Resource, obj: Obj) -> Obj:
        return self._replace(res, obj, status_only=False)

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        return self._replace(res, obj, status_only=True)

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        return self._patch(res, name, patch, namespace, status_only=False)

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        return self._patch(res, name, patch, namespace, status_only=True)

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        self.delete_object(res, name, namespace)

    def delete_object(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        """Delete and return the object as the deletion left it: marked for deletion, or gone."""
        with self._writing():
            ns = self._scope(res, namespace, name)
            result = self._delete_locked(res, self._get_locked(res, name, ns))
        return _copy(result)

    # -- watches ------------------------------------------------------------------------------

    def watch(
        self,
        res: Resource,
        on_event: EventHandler,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        resource_version: str | None = None,
        on_error: ErrorHandler | None = None,
    ) -> Watch:
        self._check_served(res)
        since = self._parse_rv(res, resource_version)
        with self._lock:
            sub = self._hub.subscribe(
                _kind_key(res),
                on_event,
                namespace=namespace if res.namespaced and namespace else None,
                labels=labels,
                on_error=on_error,
                since=since,
                current_rv=self._rv,
            )
        self._hub.dispatch()
        return sub

    def fail_watches(self, error: Exception) -> None:
        """End every open watch by calling its `on_error` with `error` (a dropped connection)."""
        self._hub.fail_all(error)

    def compact_history(self) -> None:
        """Forget watch history: resuming from any resourceVersion older than now is Gone."""
        with self._lock:
            self._hub.compact(self._rv)

    # -- internals: checks and lookup -----------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            with self._lock:
                yield
        finally:
            self._hub.dispatch()

    def _new_uid(self) -> str:
        return str(uuid.UUID(int=self._uid_source.getrandbits(128), version=4))

    def _check_served(self, res: Resource) -> None:
        if self._served is not None and _kind_key(res) not in self._served:
            raise KindNotServed(f"the server does not serve {res}")

    def _scope(self, res: Resource, namespace: str | None, name: str) -> str:
        """The namespace key of an object: required for namespaced kinds, "" for cluster-scoped."""
        self._check_served(res)
        if not res.namespaced:
            return ""
        if not namespace:
            raise Invalid("namespace is required", obj=describe(res, None, name))
        return namespace

    def _get_locked(self, res: Resource, name: str, ns: str) -> Obj:
        found = self._objects.get(_kind_key(res), {}).get(ns, {}).get(name)
        if found is None:
            raise NotFound("not found", obj=describe(res, ns, name))
        return found

    def _parse_rv(self, res: Resource, resource_version: str | None) -> int | None:
        # "0" is the version an empty store lists at: replay from it, or a write that lands
        # between that list and this watch would never be delivered.
        if resource_version in (None, ""):
            return None
        try:
            return int(str(resource_version))
        except ValueError:
            raise Invalid(
                f"resourceVersion {resource_version!r} is not a resourceVersion of this store",
                obj=f"watch of {res}",
            ) from None

    def _check_namespace_open(self, ns: str, where: str) -> None:
        namespace = self._objects.get(_kind_key(NAMESPACE), {}).get("", {}).get(ns)
        if namespace is None:
            if self._require_namespaces:
                raise NotFound(f"namespace {ns!r} not found", obj=where)
        elif namespace["metadata"].get("deletionTimestamp"):
            raise Forbidden(
                f"unable to create new content in namespace {ns!r} because it is being terminated",
                obj=where,
            )

    # -- internals: writes --------------------------------------------------------------------

    def _create_locked(self, res: Resource, obj: Obj) -> Obj:
        self._check_served(res)
        body = _writable(obj) if isinstance(obj, Mapping) else {}
        meta = body.get("metadata")
        if not isinstance(meta, dict):
            raise Invalid("metadata is required", obj=str(res), field="metadata")
        if not meta.get("name") and isinstance(meta.get("generateName"), str):
            meta["name"] = generated_name(meta["generateName"])
        unnamed = describe(res, meta.get("namespace"), "<unnamed>")
        name = validate_name(res, meta.get("name"), unnamed)
        ns = self._scope(res, meta.get("namespace"), name)
        where = describe(res, ns, name)
        validate_metadata(meta, where)
        if res.namespaced:
            validate_namespace_name(ns, where)
            self._check_namespace_open(ns, where)
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if name in self._objects.get(_kind_key(res), {}).get(ns, {}):
            raise AlreadyExists("already exists", obj=where)
        created = new_object(res, body, uid=self._new_uid(), now=rfc3339(self._clock()))
        return self._put(res, created, None)

    def _replace(self, res: Resource, obj: Obj, *, status_only: bool) -> Obj:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
            raise Invalid("metadata.name is required", obj=str(res), field="metadata.name")
        with self._writing():
            ns = self._scope(res, meta.get("namespace"), meta["name"])
            stored = self._get_locked(res, meta["name"], ns)
            result = self._apply(res, stored, _writable(obj), status_only=status_only)
        return _copy(result)

    def _patch(
        self,
        res: Resource,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None,
        *,
        status_only: bool,
    ) -> Obj:
        if not isinstance(patch, Mapping):
            raise Invalid("a merge patch must be a JSON object", obj=str(res))
        with self._writing():
            ns = self._scope(res, namespace, name)
            stored = self._get_locked(res, name, ns)
            body = _writable(merged_sharing(stored, patch))
            result = self._apply(res, stored, body, status_only=status_only)
        return _copy(result)

    def _apply(self, res: Resource, stored: Obj, body: Obj, *, status_only: bool) -> Obj:
        """Turn a full replacement body into the next stored state; no-op writes change nothing."""
        check_precondition(res, stored, body)
        new = status_write(stored, body) if status_only else spec_write(res, stored, body)
        if same(new, stored):
            return stored
        if new["metadata"].get("deletionTimestamp") and self._removable(res, new):
            return self._remove(res, new)
        return self._put(res, new, stored)

    def _delete_locked(self, res: Resource, stored: Obj) -> Obj:
        meta = stored["metadata"]
        if meta.get("deletionTimestamp"):
            return stored
        if self._removable(res, stored):
            return self._remove(res, stored)
        marked = marked_for_deletion(res, stored, rfc3339(self._clock()))
        result = self._put(res, marked, stored)
        if res == NAMESPACE:
            self._delete_namespace_content(meta["name"])
            return self._get_locked(res, meta["name"], "") if self._exists(res, result) else result
        return result

    def _removable(self, res: Resource, obj: Obj) -> bool:
        if obj["metadata"].get("finalizers"):
            return False
        return res != NAMESPACE or not self._namespace_has_content(obj["metadata"]["name"])

    def _exists(self, res: Resource, obj: Obj) -> bool:
        meta = obj["metadata"]
        return meta["name"] in self._objects.get(_kind_key(res), {}).get(
            meta.get("namespace", ""), {}
        )

    def _namespace_has_content(self, ns: str) -> bool:
        namespaces = _kind_key(NAMESPACE)
        return any(ns in by_ns for key, by_ns in self._objects.items() if key != namespaces)

    def _delete_namespace_content(self, ns: str) -> None:
        for key, by_ns in list(self._objects.items()):
            res = self._resources[key]
            if not res.namespaced:
                continue
            for name in sorted(by_ns.get(ns, {})):
                # Earlier deletions may have cascaded to this one: act on what is stored now.
                current = by_ns.get(ns, {}).get(name)
                if current is not None:
                    self._delete_locked(res, current)

    def _finish_namespace(self, ns: str) -> None:
        """Remove a terminating namespace once its last content is gone."""
        namespace = self._objects.get(_kind_key(NAMESPACE), {}).get("", {}).get(ns)
        if (
            namespace is not None
            and namespace["metadata"].get("deletionTimestamp")
            and self._removable(NAMESPACE, namespace)
        ):
            self._remove(NAMESPACE, namespace)

    def _cascade(self, uid: str) -> None:
        """Background garbage collection: delete dependents left without any live owner."""
        for key, ns, name in sorted(self._dependents.pop(uid, set())):
            dependent = self._objects.get(key, {}).get(ns, {}).get(name)
            if dependent is None or any(u in self._uids for u in owner_uids(dependent)):
                continue
            self._delete_locked(self._resources[key], dependent)

    # -- internals: the index -----------------------------------------------------------------

    def _put(self, res: Resource, new: Obj, previous: Obj | None) -> Obj:
        self._rv += 1
        new["metadata"]["resourceVersion"] = str(self._rv)
        obj: Obj = freeze(new)
        key, meta = _kind_key(res), obj["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        self._resources.setdefault(key, res)
        self._objects.setdefault(key, {}).setdefault(ns, {})[name] = obj
        self._index_owners((key, ns, name), previous, obj)
        self._uids[meta["uid"]] = (key, ns, name)
        event = EventType.ADDED if previous is None else EventType.MODIFIED
        self._hub.record(Change(self._rv, key, ns, event, obj, previous))
        return obj

    def _remove(self, res: Resource, obj: Obj) -> Obj:
        self._rv += 1
        final: Obj = freeze(
            {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self._rv)}}
        )
        key, meta = _kind_key(res), obj["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        by_ns = self._objects[key]
        indexed = by_ns[ns].pop(name)
        if not by_ns[ns]:
            del by_ns[ns]
        self._index_owners((key, ns, name), indexed, None)
        self._uids.pop(meta["uid"], None)
        self._hub.record(Change(self._rv, key, ns, EventType.DELETED, final))
        self._cascade(meta["uid"])
        if ns:
            self._finish_namespace(ns)
        return final

    def _index_owners(self, where: Location, previous: Obj | None, current: Obj | None) -> None:
        before = owner_uids(previous) if previous else frozenset()
        after = owner_uids(current) if current else frozenset()
        for uid in before - after:
            dependents = self._dependents.get(uid)
            if dependents is not None:
                dependents.discard(where)
                if not dependents:
                    del self._dependents[uid]
        for uid in after - before:
            self._dependents.setdefault(uid, set()).add(where)
