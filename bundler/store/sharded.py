"""ShardedStore: a Store through which one shard sees only the objects of its own workspaces.

Lists and watches drop every object another shard owns (bundler.core.shards.workspace_of), so the
informers, indexes and controllers above never hold, decide about or write another shard's
objects: a shard's manager is the whole manager for a part of the fleet. Reads by name and writes
go through unchanged (a controller only names objects it was shown, and the leader election's
Lease is read by name). Objects of no workspace are seen by every shard.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.api.resources import Resource
from bundler.core.shards import Shard, workspace_of
from bundler.store.protocol import (
    ErrorHandler,
    EventHandler,
    Obj,
    ObjectList,
    Store,
    Watch,
    WatchEvent,
)


class ShardedStore:
    """`inner` as `shard` sees it."""

    def __init__(self, inner: Store, shard: Shard) -> None:
        self.inner = inner
        self.shard = shard

    def sees(self, res: Resource, obj: Obj) -> bool:
        workspace = workspace_of(res, obj)
        return workspace is None or self.shard.owns(workspace)

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> ObjectList:
        listed = self.inner.list(res, namespace, labels)
        return ObjectList([o for o in listed.items if self.sees(res, o)], listed.resource_version)

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
        def deliver(event: WatchEvent) -> None:
            if self.sees(res, event.object):
                on_event(event)

        return self.inner.watch(
            res,
            deliver,
            namespace=namespace,
            labels=labels,
            resource_version=resource_version,
            on_error=on_error,
        )

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        return self.inner.get(res, name, namespace)

    def create(self, res: Resource, obj: Obj) -> Obj:
        return self.inner.create(res, obj)

    def update(self, res: Resource, obj: Obj) -> Obj:
        return self.inner.update(res, obj)

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        return self.inner.update_status(res, obj)

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        return self.inner.patch(res, name, patch, namespace)

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        return self.inner.patch_status(res, name, patch, namespace)

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        self.inner.delete(res, name, namespace)
