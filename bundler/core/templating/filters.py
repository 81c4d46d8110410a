"""Filters bundler adds to Jinja's for values: building lists of maps, which Jinja cannot express.

A values tree often needs one map per item of a list a cluster carries (Calico: one IP pool per pod
CIDR). Jinja has no comprehension, and a `${% for %}` block renders text, not data; `to_objects`
builds the list of maps as data, so it keeps its native type when it is the whole expression.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def to_objects(items: Iterable[Any], key: str, **fields: Any) -> list[dict[str, Any]]:
    """`[a, b] | to_objects('cidr', nat=true)` -> `[{cidr: a, nat: true}, {cidr: b, nat: true}]`."""
    if not isinstance(key, str):
        raise TypeError(f"to_objects: the key must be a string, got {type(key).__name__}")
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise TypeError(f"to_objects: expected a list, got {type(items).__name__}")
    return [{key: item, **fields} for item in items]
