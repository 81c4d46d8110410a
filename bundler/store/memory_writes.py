"""How a write turns the stored object into the next one, as the API server computes it.

Pure functions over JSON dicts: stamping a new object, the resourceVersion precondition, what an
update or a status update may change, when generation moves, and marking for deletion. They never
mutate the stored object they are given (it is frozen and shared).
"""

from __future__ import annotations

import json
from typing import Any

from bundler.api.resources import Resource
from bundler.store.errors import Conflict, Invalid
from bundler.store.memory_defaults import apply_kind_defaults
from bundler.store.memory_meta import describe, validate_metadata
from bundler.store.protocol import Obj

# Metadata the server owns: kept from the stored object whatever a write sends.
_SERVER_METADATA = ("uid", "creationTimestamp", "deletionTimestamp", "generation")
_ENVELOPE = ("apiVersion", "kind", "metadata")


def same(a: Obj, b: Obj) -> bool:
    """Equal as JSON. Not ==, which equates True with 1 and 1 with 1.0."""
    return _canonical(a) == _canonical(b)


def where_of(res: Resource, obj: Obj) -> str:
    meta = obj["metadata"]
    return describe(res, meta.get("namespace"), meta["name"])


def new_object(res: Resource, body: Obj, *, uid: str, now: str) -> Obj:
    """A validated create body with the server's metadata stamped on it."""
    meta = body["metadata"]
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
        meta.pop(key, None)
    meta.update(uid=uid, creationTimestamp=now, generation=1)
    created = _with_envelope(res, body)
    if res.status_subresource:
        created.pop("status", None)
    apply_kind_defaults(res, created, where_of(res, created))
    return created


def check_precondition(res: Resource, stored: Obj, body: Obj) -> None:
    """Conflict when the body names a resourceVersion other than the stored one."""
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        raise Invalid("metadata must be an object", obj=where_of(res, stored), field="metadata")
    expected = meta.get("resourceVersion")
    current = stored["metadata"]["resourceVersion"]
    if expected not in (None, "") and str(expected) != current:
        raise Conflict(
            f"the object has been modified (resourceVersion {expected} is stale, now "
            f"{current}): read it again and retry",
            obj=where_of(res, stored),
        )


def status_write(stored: Obj, body: Obj) -> Obj:
    """The next state after a status update: the body's status, everything else as stored."""
    new = {**stored, "metadata": dict(stored["metadata"])}
    if "status" in body:
        new["status"] = body["status"]
    else:
        new.pop("status", None)
    return new


def spec_write(res: Resource, stored: Obj, body: Obj) -> Obj:
    """The next state after an update: the body, minus status and server-owned metadata."""
    old_meta, meta = stored["metadata"], body["metadata"]
    where = where_of(res, stored)
    if not res.namespaced:
        meta.pop("namespace", None)
    for key in ("name", "namespace"):
        if meta.get(key, old_meta.get(key)) != old_meta.get(key):
            raise Invalid(f"{key} cannot change", obj=where, field=f"metadata.{key}")
    validate_metadata(meta, where)
    _check_no_new_finalizers(old_meta, meta, where)
    meta.pop("deletionGracePeriodSeconds", None)
    for key in _SERVER_METADATA:
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    meta["resourceVersion"] = old_meta["resourceVersion"]
    new = _with_envelope(res, body)
    if res.status_subresource:
        new.pop("status", None)
        if "status" in stored:
            new["status"] = stored["status"]
    apply_kind_defaults(res, new, where)
    if not same(_spec_of(res, new), _spec_of(res, stored)):
        meta["generation"] = old_meta.get("generation", 0) + 1
    return new


def marked_for_deletion(res: Resource, stored: Obj, now: str) -> Obj:
    """The stored object with deletionTimestamp set; like the API server, generation moves too."""
    meta = stored["metadata"]
    marked = {
        **stored,
        "metadata": {**meta, "deletionTimestamp": now, "generation": meta.get("generation", 0) + 1},
    }
    apply_kind_defaults(res, marked, where_of(res, stored))
    return marked


def _check_no_new_finalizers(old_meta: Obj, meta: Obj, where: str) -> None:
    if not old_meta.get("deletionTimestamp"):
        return
    added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
    if added:
        raise Invalid(
            f"no new finalizers can be added while the object is being deleted: {sorted(added)}",
            obj=where,
            field="metadata.finalizers",
        )


def _spec_of(res: Resource, obj: Obj) -> dict[str, Any]:
    """What generation tracks: everything outside metadata (and status, if a subresource)."""
    skip = (*_ENVELOPE, "status") if res.status_subresource else _ENVELOPE
    return {key: value for key, value in obj.items() if key not in skip}


def _with_envelope(res: Resource, body: Obj) -> Obj:
    """`body` led by the kind's apiVersion and kind, as the API server writes objects."""
    rest = {key: value for key, value in body.items() if key not in ("apiVersion", "kind")}
    return {"apiVersion": res.api_version, "kind": res.kind, **rest}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
