"""What the agent owns on the objects it writes, and how it updates them without taking the rest.

The agent owns the content (`spec`, or `type`/`data` of a Secret) and bundler's own labels and
annotations (keys under `bundler.dev/`). Everything else on a live object belongs to someone else
and survives every update: Flux's finalizer (dropping it would break uninstall), other labels and
annotations, and the status.

Drift is judged leniently where the API server adds defaults: a desired map must be contained in the
live one (extra keys nested in the live object are the server's defaults), except for Helm values,
which are free-form and compared exactly, and for top-level spec fields the agent writes, which must
not appear in the live object when the agent left them out (e.g. a `dependsOn` that was removed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.core.json_equality import json_equal
from bundler.store.mergepatch import json_copy
from bundler.store.protocol import Obj

OWNED_PREFIX = "bundler.dev/"
_ENVELOPE = frozenset({"apiVersion", "kind", "metadata", "status"})
# Free-form maps: a key missing from the desired map is drift, not a server default.
_EXACT_FIELDS = frozenset({"values", "data"})
# Top-level spec fields the API server fills in from the Flux CRDs' defaults (not ours to remove).
_SERVER_DEFAULTED: dict[str, frozenset[str]] = {
    "HelmRepository": frozenset({"provider"}),
    "OCIRepository": frozenset({"provider", "timeout"}),
}


def needs_write(desired: Obj, live: Mapping[str, Any]) -> bool:
    """Whether `live` differs from `desired` in anything the agent owns."""
    if _owned(live, "labels") != _owned(desired, "labels"):
        return True
    if _owned(live, "annotations") != _owned(desired, "annotations"):
        return True
    for key, value in desired.items():
        if key in _ENVELOPE:
            continue
        if key == "spec":
            defaulted = _SERVER_DEFAULTED.get(str(desired.get("kind")), frozenset())
            if not _spec_matches(value, live.get("spec"), defaulted):
                return True
        elif not _contains(value, live.get(key), exact=key in _EXACT_FIELDS):
            return True
    return False


def merged(desired: Obj, live: Mapping[str, Any]) -> Obj:
    """`live` with the agent's part replaced by `desired`; resourceVersion kept for the update."""
    out: Obj = json_copy(live)
    meta = out.setdefault("metadata", {})
    wanted = desired.get("metadata") or {}
    for field in ("labels", "annotations"):
        kept = {k: v for k, v in (meta.get(field) or {}).items() if not k.startswith(OWNED_PREFIX)}
        combined = {**kept, **(wanted.get(field) or {})}
        if combined:
            meta[field] = combined
        else:
            meta.pop(field, None)
    for key in [k for k in out if k not in _ENVELOPE and k not in desired]:
        del out[key]
    for key, value in desired.items():
        if key not in _ENVELOPE:
            out[key] = json_copy(value)
    return out


def _owned(obj: Mapping[str, Any], field: str) -> dict[str, str]:
    found = (obj.get("metadata") or {}).get(field) or {}
    return {k: v for k, v in found.items() if k.startswith(OWNED_PREFIX)}


def _spec_matches(desired: Any, live: Any, defaulted: frozenset[str]) -> bool:
    if not isinstance(desired, Mapping) or not isinstance(live, Mapping):
        return json_equal(desired, live)
    extra = set(live) - set(desired) - defaulted
    if extra:
        return False
    return all(
        _contains(value, live.get(key), exact=key in _EXACT_FIELDS)
        for key, value in desired.items()
    )


def _contains(desired: Any, live: Any, *, exact: bool = False) -> bool:
    """`desired` is in `live`: equal scalars and lists, and maps whose keys all match."""
    if exact or not isinstance(desired, Mapping):
        return json_equal(desired, live)
    if not isinstance(live, Mapping):
        return False
    return all(
        key in live and _contains(value, live[key], exact=key in _EXACT_FIELDS)
        for key, value in desired.items()
    )
