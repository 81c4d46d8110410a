"""One ClusterGroup per ClusterClass in use, per namespace: created, corrected, and removed when the
last imported Cluster of the class goes.

Keyed by namespace (`Key("", namespace)`): any change to the namespace's Clusters or ClusterGroups
recomputes its groups from `class_groups()` of the imported Clusters that are not being deleted.
Only groups labelled `bundler.dev/managed-by: bundler-capi-import` are the importer's; a group of
the same name written by someone else is left alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from bundler.api.resources import CLUSTER_GROUP
from bundler.capi.caches import ScopedCache
from bundler.core.capi_import import capi_owner, class_groups
from bundler.core.labels import LABEL_MANAGED_BY, MANAGED_BY_CAPI_IMPORT
from bundler.runtime.controller import Result
from bundler.runtime.key import Key
from bundler.store.errors import AlreadyExists, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)


def namespace_key(obj: Obj) -> Iterable[Key]:
    """The key of the namespace an object lives in: what wakes its class groups."""
    return (Key("", obj["metadata"]["namespace"]),)


def is_importers(group: Obj) -> bool:
    labels = group["metadata"].get("labels") or {}
    return bool(labels.get(LABEL_MANAGED_BY) == MANAGED_BY_CAPI_IMPORT)


class ClassGroups:
    """`reconcile(Key("", namespace))`: that namespace's ClusterGroups per ClusterClass."""

    def __init__(self, store: Store, *, clusters: ScopedCache, groups: ScopedCache) -> None:
        self._store = store
        self._clusters = clusters
        self._groups = groups

    def __call__(self, key: Key) -> Result | None:
        namespace = key.name
        imported = [
            c
            for c in self._clusters.list(namespace)
            if capi_owner(c) is not None and not c["metadata"].get("deletionTimestamp")
        ]
        desired = {g["metadata"]["name"]: g for g in class_groups(imported)}
        existing = {g["metadata"]["name"]: g for g in self._groups.list(namespace)}
        for name, group in desired.items():
            self._ensure(group, existing.get(name))
        for name, group in existing.items():
            if name not in desired and is_importers(group):
                self._delete(group)
        return None

    def _ensure(self, desired: Obj, existing: Obj | None) -> None:
        meta = desired["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        if existing is None:
            try:
                self._store.create(CLUSTER_GROUP, desired)
            except AlreadyExists:
                return  # a stale cache: the group's event wakes this namespace again
            log.info("capi import: created ClusterGroup %s", where)
            return
        if not is_importers(existing):
            # Every event in the namespace comes by here: not worth a warning each time.
            log.debug("capi import: ClusterGroup %s was not written by the importer: kept", where)
            return
        if _up_to_date(existing, desired):
            return
        updated = json.loads(json.dumps(existing))
        updated["metadata"]["labels"] = {
            **(existing["metadata"].get("labels") or {}),
            **meta["labels"],
        }
        updated["spec"] = desired["spec"]
        self._store.update(CLUSTER_GROUP, updated)
        log.info("capi import: updated ClusterGroup %s", where)

    def _delete(self, group: Obj) -> None:
        meta = group["metadata"]
        if meta.get("deletionTimestamp"):
            return
        try:
            self._store.delete(CLUSTER_GROUP, meta["name"], meta["namespace"])
        except NotFound:
            return
        log.info(
            "capi import: deleted ClusterGroup %s/%s (class no longer in use)",
            meta["namespace"],
            meta["name"],
        )


def _up_to_date(existing: Obj, desired: Obj) -> bool:
    """The importer's labels and the whole spec are as desired; other labels may be anything."""
    labels = existing["metadata"].get("labels") or {}
    wanted = desired["metadata"]["labels"]
    return all(labels.get(k) == v for k, v in wanted.items()) and _canonical(
        existing.get("spec")
    ) == _canonical(desired["spec"])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
