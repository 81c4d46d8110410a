"""Filters bundler adds to Jinja's for values, or puts in place of Jinja's.

``join`` writes each item as mixed text does (``true``, ``null``, JSON), not as Python prints it.

A values tree often needs one map per item of a list a cluster carries (Calico: one IP pool per pod
CIDR). Jinja has no comprehension, and a `${% for %}` block renders text, not data; `to_objects`
builds the list of maps as data, so it keeps its native type when it is the whole expression.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jinja2 import pass_context
from jinja2.filters import make_attrgetter
from jinja2.runtime import Context

from bundler.core.templating.convert import to_text
from bundler.core.templating.guards import budget_of


def to_objects(items: Iterable[Any], key: str, **fields: Any) -> list[dict[str, Any]]:
    """`[a, b] | to_objects('cidr', nat=true)` -> `[{cidr: a, nat: true}, {cidr: b, nat: true}]`."""
    if not isinstance(key, str):
        raise TypeError(f"to_objects: the key must be a string, got {type(key).__name__}")
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise TypeError(f"to_objects: expected a list, got {type(items).__name__}")
    return [{key: item, **fields} for item in items]


@pass_context
def join_as_text(
    context: Context, items: Iterable[Any], d: Any = "", attribute: str | int | None = None
) -> str:
    """`[1, true, none] | join(',')` -> `1,true,null`; `attribute` joins that field of each."""
    budget = budget_of(context)
    if attribute is not None:
        items = map(make_attrgetter(context.environment, attribute), items)
    return to_text(d, budget).join(to_text(item, budget) for item in items)
