"""Option merge: a target's overrides laid over the bundle's own `spec.helm`.

Maps merge key by key, recursively; lists and scalars replace. That is how `values` deep-merge, how
a target's `install.remediation.retries` changes one knob, and how `chart`/`version`/`repo` replace.
One list is the exception, as in Fleet: a target's `valuesFrom` entries are appended to the
bundle's, an entry equal to one already there dropped (a target adds a ConfigMap or Secret of
values, it cannot forget the bundle's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """A new tree: `override` laid over `base`; neither input is modified or aliased."""
    merged: dict[str, Any] = {k: _copy(v) for k, v in base.items()}
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = _copy(value)
    return merged


APPENDED_LISTS = ("valuesFrom",)


def merge_helm(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """A target's `helm` overrides laid over `base`: deep_merge, with APPENDED_LISTS appended."""
    merged = deep_merge(base, override)
    for key in APPENDED_LISTS:
        before, added = base.get(key), override.get(key)
        if isinstance(before, list) and isinstance(added, list):
            merged[key] = _copy(before) + [_copy(e) for e in added if e not in before]
    return merged


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
