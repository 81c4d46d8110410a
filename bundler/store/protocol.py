"""The store protocol: the whole contract controllers have with a Kubernetes-like API.

Objects are plain JSON-shaped dicts (`Obj`), exactly as the API server would serve them. Writes are
create, update with resourceVersion (Conflict on mismatch), JSON merge-patch and delete; there is no
server-side apply. Watches deliver events to a callback instead of handing out a blocking iterator,
so one process can host a thousand controllers without a thread per watch (the in-memory backend
calls back synchronously; a network backend runs its stream wherever it likes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from bundler.api.resources import Resource

Obj = dict[str, Any]


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True)
class WatchEvent:
    type: EventType
    object: Obj


@dataclass(frozen=True)
class ObjectList:
    items: list[Obj]
    resource_version: str


class Watch(Protocol):
    """A running watch; `stop()` ends it and no callback follows once it returns."""

    def stop(self) -> None: ...


EventHandler = Callable[[WatchEvent], None]
ErrorHandler = Callable[[Exception], None]


class Store(Protocol):
    """What every controller may do to the world. Errors come from bundler.store.errors."""

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj: ...

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> ObjectList:
        """All objects of a kind (in a namespace, or all when None) whose labels equal `labels`."""
        ...

    def create(self, res: Resource, obj: Obj) -> Obj: ...

    def update(self, res: Resource, obj: Obj) -> Obj:
        """Replace everything but status; Conflict when metadata.resourceVersion is stale."""
        ...

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        """Replace status only (status subresource); Conflict when resourceVersion is stale."""
        ...

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        """JSON merge patch (RFC 7386) of everything but status."""
        ...

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        """JSON merge patch of the status subresource."""
        ...

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        """Delete; while finalizers remain the object stays with metadata.deletionTimestamp set."""
        ...

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
        """Events after `resource_version` (None: from now; Gone when too old) until stopped.

        `on_error` receives errors that end the watch (Gone, a dropped connection): the caller
        relists.
        """
        ...
