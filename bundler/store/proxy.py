"""`StoreProxy`: a Store that hands every call to another store, with hooks around each call for
what a subclass wants to see or change: a link that fails calls on purpose, a count of the
requests made (bundler.sim.counted_store)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from bundler.api.resources import Resource
from bundler.store.protocol import ErrorHandler, EventHandler, Obj, ObjectList, Store, Watch


class Verb(StrEnum):
    """The Store methods, by name."""

    GET = "get"
    LIST = "list"
    CREATE = "create"
    UPDATE = "update"
    UPDATE_STATUS = "update_status"
    PATCH = "patch"
    PATCH_STATUS = "patch_status"
    DELETE = "delete"
    WATCH = "watch"


WRITE_VERBS = frozenset(
    {Verb.CREATE, Verb.UPDATE, Verb.UPDATE_STATUS, Verb.PATCH, Verb.PATCH_STATUS, Verb.DELETE}
)


class StoreProxy:
    """Every call runs `before(verb, res)` (raising there fails the call without reaching
    `inner`), then `called(verb, res, namespace, name)` with what it names (a list or a watch
    names no object: ""), then the same method of `inner`; a get or a list that returns hands
    what it read to `read(res, objects)`."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def before(self, verb: Verb, res: Resource) -> None:
        """Runs before every call; raising here fails the call without reaching `inner`."""

    def called(self, verb: Verb, res: Resource, namespace: str | None, name: str) -> None:
        """Runs once `before` lets a call through, before `inner` answers it."""

    def read(self, res: Resource, objects: Sequence[Obj]) -> None:
        """What a get or a list returned."""

    def _enter(self, verb: Verb, res: Resource, namespace: str | None, name: str = "") -> None:
        self.before(verb, res)
        self.called(verb, res, namespace, name)

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        self._enter(Verb.GET, res, namespace, name)
        found = self.inner.get(res, name, namespace)
        self.read(res, [found])
        return found

    def list(
        self, res: Resource, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> ObjectList:
        self._enter(Verb.LIST, res, namespace)
        found = self.inner.list(res, namespace, labels)
        self.read(res, found.items)
        return found

    def create(self, res: Resource, obj: Obj) -> Obj:
        self._enter(Verb.CREATE, res, *_named(obj))
        return self.inner.create(res, obj)

    def update(self, res: Resource, obj: Obj) -> Obj:
        self._enter(Verb.UPDATE, res, *_named(obj))
        return self.inner.update(res, obj)

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        self._enter(Verb.UPDATE_STATUS, res, *_named(obj))
        return self.inner.update_status(res, obj)

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        self._enter(Verb.PATCH, res, namespace, name)
        return self.inner.patch(res, name, patch, namespace)

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        self._enter(Verb.PATCH_STATUS, res, namespace, name)
        return self.inner.patch_status(res, name, patch, namespace)

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        self._enter(Verb.DELETE, res, namespace, name)
        self.inner.delete(res, name, namespace)

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
        self._enter(Verb.WATCH, res, namespace)
        return self.inner.watch(
            res,
            on_event,
            namespace=namespace,
            labels=labels,
            resource_version=resource_version,
            on_error=on_error,
        )


def _named(obj: Obj) -> tuple[str | None, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace"), str(meta.get("name") or "")
