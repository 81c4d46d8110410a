"""JSON merge patch (RFC 7386) and copying of JSON-shaped values.

Both work on JSON values (dicts, lists, strings, numbers, booleans, None) and never mutate their
inputs; `merged_sharing` is the merge without the copy, for targets nobody can change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.store.frozen import FrozenDict, FrozenList

_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value; much cheaper than `copy.deepcopy` for this shape of data."""
    # Exact types first: the abstract-class checks below cost more than the copy of a small value.
    kind = type(value)
    if kind is dict or kind is FrozenDict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind in _SCALARS:
        return value
    if kind is list or kind is FrozenList:
        return [json_copy(item) for item in value]
    if isinstance(value, Mapping):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_copy(item) for item in value]
    return value


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply `patch` to `target` per RFC 7386 and return the result as a new value.

    A mapping in the patch merges key by key, `None` removes a key, anything else (lists included)
    replaces the target's value wholesale.
    """
    return json_copy(merged_sharing(target, patch))


def merged_sharing(target: Any, patch: Any) -> Any:
    """`merge_patch` without the copy: what the patch leaves alone is `target`'s own, and what it
    sets is `patch`'s own. For a read-only target (the store's frozen objects)."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, item in patch.items():
        if item is None:
            result.pop(key, None)
        else:
            result[key] = merged_sharing(result.get(key), item)
    return result
