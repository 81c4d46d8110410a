"""What a values tree's templates read of their context, so that renders can be memoised.

A render is a pure function of the values tree and of the parts of the context its templates
read (the sandbox has no clock, no randomness and no I/O, and each cluster's render starts from a
fresh budget, so even its failures repeat). Clusters that agree on those parts render alike:
`${ cluster.labels.region }` over 1000 clusters has as many distinct renders as regions.

A read is the longest chain of constant attribute and item lookups from a variable
(`cluster.labels.region`, `ClusterLabels["app"]`). Whatever a template does with the value at the
end of the chain (loop over it, call its methods, pass it to a filter) depends on that value only,
so the chain is cut wherever a lookup is not constant, and a value is taken whole wherever a
lookup would reach past plain data (`cluster.labels.items`, a string's method): the key is then
coarser than it could be, never too fine.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes

ReadPath = tuple[str | int, ...]

#: The key part of a lookup that finds nothing (and that no Python attribute could answer).
_MISSING = ("missing",)


def reads_of(tree: nodes.Node) -> frozenset[ReadPath]:
    """Every chain of constant lookups from a variable in a parsed template."""
    return frozenset(_reads(tree))


def _reads(node: nodes.Node) -> Iterator[ReadPath]:
    chain = _chain(node)
    if chain is not None:
        path, rest = chain
        yield path
        for child in rest:
            yield from _reads(child)
        return
    for child in node.iter_child_nodes():
        yield from _reads(child)


def _chain(node: nodes.Node) -> tuple[ReadPath, list[nodes.Node]] | None:
    """(the constant path from a variable, the non-constant operands met on the way)."""
    steps: list[str | int] = []
    rest: list[nodes.Node] = []
    while True:
        if isinstance(node, nodes.Name):
            return (node.name, *reversed(steps)), rest
        if isinstance(node, nodes.Getattr):
            steps.append(node.attr)
        elif isinstance(node, nodes.Getitem):
            if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str | int):
                steps.append(node.arg.value)
            else:  # a computed lookup: the value before it is read whole
                steps.clear()
                rest.append(node.arg)
        else:
            return None
        node = node.node


@dataclass(frozen=True)
class ValuesReads:
    """The templates of one values tree: whether there are any, and what they read."""

    templated: bool
    #: Sorted; None when a template does not compile (its render reports why).
    paths: tuple[ReadPath, ...] | None


def read_key(paths: tuple[ReadPath, ...], variables: Mapping[str, Any]) -> Hashable | None:
    """What the templates read of `variables`, as a hashable key (None: not keyable)."""
    parts: list[Hashable] = []
    for path in paths:
        part = _key_part(_resolve(path, variables))
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)


def _resolve(path: ReadPath, variables: Mapping[str, Any]) -> Any:
    value: Any = variables
    for step in path:
        if not isinstance(value, Mapping):
            return value  # whatever follows is computed from this value alone
        if step in value:
            value = value[step]
        elif isinstance(step, str) and hasattr(value, step):
            return value  # a method of the map (`items`): it sees the whole map
        else:
            return _MISSING
    return value


def _key_part(value: Any) -> Hashable | None:
    if value is _MISSING or type(value) is str:
        return value
    try:
        return ("json", json.dumps(value, sort_keys=True, separators=(",", ":")))
    except (TypeError, ValueError):
        pass
    try:  # a value object (an image's answer: a frozen dataclass) is its own key
        hash(value)
    except TypeError:
        return None
    return ("value", value)
