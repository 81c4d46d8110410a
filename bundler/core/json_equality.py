"""Whether two decoded JSON values are the same document, as an API server would store them.

Python's `==` equates `True` with `1`; JSON does not, and neither must drift detection or a
decision to write. Numbers compare by value (an API server stores `1.0` as `1`), maps whatever
their key order, and a list equals a tuple of the same items. The walk stops at the first
difference and compares strings and numbers of one type directly: about twice as fast as
comparing canonical JSON texts (what the manager did before for every BundleDeployment it
considered writing) on a realistic BundleDeployment spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Types whose values compare with `==` alone when both sides have the type.
_PLAIN = frozenset({str, int, float, bool, type(None)})
_MAPS = (dict, Mapping)  # dict first: the ABC's check is slow
_LISTS = (list, tuple)
#: What a number or a string never equals as JSON.
_BOOL_OR_CONTAINER = (bool, *_MAPS, *_LISTS)
_MISSING = object()


def json_equal(a: Any, b: Any) -> bool:
    """Whether `a` and `b` are equal as JSON: never a boolean equal to a number."""
    if a is b:
        return True
    kind = type(a)
    if kind is type(b) and kind in _PLAIN:
        return bool(a == b)
    if isinstance(a, _MAPS):
        return isinstance(b, _MAPS) and len(a) == len(b) and _items_equal(a, b)
    if isinstance(a, _LISTS):
        return isinstance(b, _LISTS) and len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(a, bool) or isinstance(b, _BOOL_OR_CONTAINER):
        return False
    return bool(a == b)


def _items_equal(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> bool:
    for key, value in a.items():
        other = b.get(key, _MISSING)
        if other is _MISSING or not json_equal(value, other):
            return False
    return True
