"""The manager's writes: only when something differs, updates retried from a fresh read on 409.

Every helper first compares what it would write with what the caller already observed (the informer
cache) and sends nothing when they are equal: that is what makes a resync of an unchanged world
cost zero write requests. Updates carry the observed resourceVersion; on Conflict the object is read
again, the change is re-applied to the fresh copy, and the update is tried again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from bundler.api.resources import Resource
from bundler.core.json_equality import json_equal
from bundler.store.errors import AlreadyExists, Conflict, NotFound
from bundler.store.mergepatch import json_copy
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

UPDATE_ATTEMPTS = 3

# Changes `obj` in place to what it should be; returns False when nothing needed changing.
Mutation = Callable[[Obj], bool]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def merge_diff(old: Any, new: Any) -> Any:
    """A JSON merge patch (RFC 7386) that turns `old` into `new`."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return json_copy(new)
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old or not json_equal(old[key], value):
            patch[key] = merge_diff(old.get(key), value)
    return patch


def status_patch(current: Mapping[str, Any] | None, owned: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch of status that sets the `owned` fields (None: absent), others untouched."""
    current = current or {}
    patch: dict[str, Any] = {}
    for key, value in owned.items():
        if not json_equal(current.get(key), value):
            patch[key] = merge_diff(current.get(key), value)
    return patch


def patch_status_if_changed(
    store: Store, res: Resource, observed: Obj, owned: Mapping[str, Any]
) -> bool:
    """Merge-patch the `owned` status fields that differ from `observed`; True if it wrote."""
    patch = status_patch(observed.get("status"), owned)
    if not patch:
        return False
    meta = observed["metadata"]
    store.patch_status(res, meta["name"], {"status": patch}, meta.get("namespace"))
    return True


def update_with_retry(store: Store, res: Resource, observed: Obj, mutate: Mutation) -> Obj:
    """Apply `mutate` to a copy of `observed` and update it if it changed, re-reading on 409."""
    obj: Obj = json_copy(observed)
    meta = obj["metadata"]
    name, namespace = meta["name"], meta.get("namespace")
    for attempt in range(1, UPDATE_ATTEMPTS + 1):
        if not mutate(obj):
            return obj
        try:
            return store.update(res, obj)
        except Conflict as conflict:
            if attempt == UPDATE_ATTEMPTS:
                raise
            log.info("%s: %s; retrying from a fresh read", conflict.obj or name, conflict.message)
            obj = store.get(res, name, namespace)
    raise AssertionError("unreachable: the last attempt returns or raises")


def create_or_update(
    store: Store, res: Resource, desired: Obj, observed: Obj | None, mutate: Mutation
) -> Obj | None:
    """Create `desired` when nothing was observed, else update `observed` through `mutate`.

    An AlreadyExists (the cache had not seen the object yet) falls back to updating a fresh read.
    Returns the written object, or None when nothing was written.
    """
    if observed is None:
        try:
            return store.create(res, desired)
        except AlreadyExists:
            meta = desired["metadata"]
            observed = store.get(res, meta["name"], meta.get("namespace"))
    probe = json_copy(observed)
    if not mutate(probe):
        return None
    return update_with_retry(store, res, observed, mutate)


def delete_if_present(store: Store, res: Resource, name: str, namespace: str | None) -> bool:
    """Delete; False when it was already gone."""
    try:
        store.delete(res, name, namespace)
    except NotFound:
        return False
    return True


def adding_finalizer(finalizer: str) -> Mutation:
    def mutate(obj: Obj) -> bool:
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if finalizer in finalizers:
            return False
        finalizers.append(finalizer)
        return True

    return mutate


def removing_finalizer(finalizer: str) -> Mutation:
    def mutate(obj: Obj) -> bool:
        finalizers = obj["metadata"].get("finalizers") or []
        if finalizer not in finalizers:
            return False
        obj["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
        return True

    return mutate


def has_finalizer(obj: Obj, finalizer: str) -> bool:
    return finalizer in (obj["metadata"].get("finalizers") or [])


def is_deleting(obj: Obj) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))
