"""Writes to the downstream store: create, update what the agent owns, suspend, delete.

Reads come from the agent's caches; a write that finds the cache stale (AlreadyExists on create, a
Conflict on update) reads the object fresh once and retries, else leaves it to the next reconcile;
an update of an object deleted since the cache saw it (NotFound) creates it again.
"""

from __future__ import annotations

import logging

from bundler.agent.caches import WORKLOADS, AgentCaches, Cached
from bundler.agent.ownership import merged, needs_write
from bundler.api.resources import Resource
from bundler.store.errors import AlreadyExists, Conflict, NotFound
from bundler.store.memory_meta import describe
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)


class DownstreamWriter:
    def __init__(self, store: Store, caches: AgentCaches) -> None:
        self.store = store
        self.caches = caches

    def put(self, res: Resource, desired: Obj) -> tuple[Cached, bool]:
        """Make the agent's part of the object `desired`: the object as it now is, and False when
        the cache held it as desired already (True: written, or the cache was behind)."""
        name = desired["metadata"]["name"]
        live = self.caches.live(res, name)
        if live is not None:
            if not needs_write(desired, live):
                return live, False
            try:
                return self._update(res, desired, live), True
            except NotFound:
                pass  # deleted since the cache saw it: create it again
        try:
            return self.store.create(res, desired), True
        except AlreadyExists:
            fresh = self._fresh(res, name)
            if not needs_write(desired, fresh):
                return fresh, True  # the cache was stale: the next reconcile sees it again
            return self._update(res, desired, fresh), True

    def _update(self, res: Resource, desired: Obj, live: Cached) -> Obj:
        try:
            return self.store.update(res, merged(desired, live))
        except Conflict:
            fresh = self._fresh(res, desired["metadata"]["name"])
            if not needs_write(desired, fresh):
                return fresh
            return self.store.update(res, merged(desired, fresh))

    def _fresh(self, res: Resource, name: str) -> Obj:
        return self.store.get(res, name, self.caches.config.flux_namespace)

    def current(self, res: Resource, cached: Cached) -> Obj | None:
        """`cached` as the store has it now (None: gone)."""
        meta = cached["metadata"]
        try:
            return self.store.get(res, meta["name"], meta.get("namespace"))
        except NotFound:
            return None

    def releases_left(self) -> bool:
        """Whether any workload object (HelmRelease) of this agent still exists, terminating or
        not (read fresh)."""
        namespace, labels = self.caches.config.flux_namespace, self.caches.config.owned_labels()
        return any(
            self.store.list(res, namespace=namespace, labels=labels).items for res in WORKLOADS
        )

    def remove(self, res: Resource, obj: Cached, *, keep_release: bool) -> None:
        """Delete `obj`; a workload object whose release must stay is suspended first, so Flux
        removes its finalizer without uninstalling."""
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            return
        name, namespace = meta["name"], meta.get("namespace")
        try:
            if res in WORKLOADS and keep_release and not obj.get("spec", {}).get("suspend"):
                self.store.patch(res, name, {"spec": {"suspend": True}}, namespace)
            self.store.delete(res, name, namespace)
        except NotFound:
            return
        log.info("deleted %s", describe(res, namespace, name))
