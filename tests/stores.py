"""Store wrappers for tests: a proxy that hands every call to a real store after a hook, and the
unreachable link built on it (every call fails while the link is down); `exists`."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from bundler.api.resources import Resource
from bundler.store.errors import NotFound, Unavailable
from bundler.store.protocol import ErrorHandler, EventHandler, Obj, ObjectList, Store, Watch


def exists(store: Store, res: Resource, name: str, namespace: str | None) -> bool:
    """Whether `store` holds that object."""
    try:
        store.get(res, name, namespace)
    except NotFound:
        return False
    return True


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


class StoreProxy:
    """A Store that calls `before(verb, res)` and then the same method of `inner`.

    Subclasses override `before` to fail calls or to observe them.
    """

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def before(self, verb: Verb, res: Resource) -> None:
        """Runs before every call; raising here fails the call without reaching `inner`."""

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        self.before(Verb.GET, res)
        return self.inner.get(res, name, namespace)

    def list(
        self, res: Resource, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> ObjectList:
        self.before(Verb.LIST, res)
        return self.inner.list(res, namespace, labels)

    def create(self, res: Resource, obj: Obj) -> Obj:
        self.before(Verb.CREATE, res)
        return self.inner.create(res, obj)

    def update(self, res: Resource, obj: Obj) -> Obj:
        self.before(Verb.UPDATE, res)
        return self.inner.update(res, obj)

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        self.before(Verb.UPDATE_STATUS, res)
        return self.inner.update_status(res, obj)

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        self.before(Verb.PATCH, res)
        return self.inner.patch(res, name, patch, namespace)

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        self.before(Verb.PATCH_STATUS, res)
        return self.inner.patch_status(res, name, patch, namespace)

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        self.before(Verb.DELETE, res)
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
        self.before(Verb.WATCH, res)
        return self.inner.watch(
            res,
            on_event,
            namespace=namespace,
            labels=labels,
            resource_version=resource_version,
            on_error=on_error,
        )


class Unreachable(StoreProxy):
    """A store seen over the network: while `down`, every call fails with Unavailable.

    Watches already running are not affected; end them on the inner store (e.g.
    MemoryStore.fail_watches) to cut them too.
    """

    def __init__(self, inner: Store, name: str = "management cluster") -> None:
        super().__init__(inner)
        self.name = name
        self.down = False
        self.calls_while_down = 0

    def before(self, verb: Verb, res: Resource) -> None:
        if self.down:
            self.calls_while_down += 1
            raise Unavailable("connection refused", obj=self.name)
