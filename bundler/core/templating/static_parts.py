"""The parts of a values tree measured once for every cluster it renders: those without templates,
and the containers the templates sit in.

A Bundle's values are rendered for each of its clusters, and most of a values tree is usually
plain data around a few templated strings. Walking that data for each cluster costs far more
than rendering the templates. :class:`StaticParts` finds, once per tree, its largest subtrees
without ``${`` anywhere (keys included) and keeps each as what the render of it would charge to
the budget, how deeply it nests, and a marshal blob that copies back at C speed into a fresh
tree that aliases nothing. The render (bundler.core.templating.render) takes a known part whole
when the budget has room for all of it and the nesting limit is not reached below it; otherwise
it walks the part as before, so limits are reported exactly where they were.

A container that holds templates (its keys plain) is kept too, as a :class:`MixedPart`: its
copy with None where the templated children go, and what everything else in it charges. The
render copies it and charges that at once, then renders only the templated children into it.
Charging the plain parts before the templates that come earlier can only refuse room sooner
than walking in order would, never accept what the walk refuses; when it refuses, the render
walks the tree again in order, so where the room runs out is reported as before.

Only JSON's shapes are taken whole (dicts with string keys, lists, strings, integers, floats,
booleans, None, of exactly those types): anything else is walked, as it always was.
"""

from __future__ import annotations

import marshal
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.core.templating.budget import MAX_NESTING, RenderBudget, text_size

_TEMPLATE_MARK = "${"
_SCALARS = (int, float, bool, type(None))
# Measures scalars as a render's budget would (their size does not depend on what is left).
_MEASURE = RenderBudget(1 << 62)


@dataclass(frozen=True)
class StaticPart:
    """A subtree without templates: what rendering it charges, how many container levels it
    has (1: a flat map or list), and its copy."""

    charge: int
    height: int
    blob: bytes

    def copy(self) -> Any:
        return marshal.loads(self.blob)


@dataclass(frozen=True)
class MixedPart:
    """A map (its keys without templates) or a list holding templates: what its own parts and
    its template-free children charge together, how many container levels the deepest of those
    children has, its copy with None where the others go, and where those are (keys or
    indexes, in order)."""

    charge: int
    height: int
    blob: bytes
    others: tuple[str | int, ...]

    def copy(self) -> Any:
        return marshal.loads(self.blob)


class StaticParts:
    """The largest template-free containers of one tree, and its containers holding templates,
    by identity. The tree must not change while this is used (values trees are never mutated
    once parsed)."""

    def __init__(self, tree: Mapping[str, Any]) -> None:
        # the nodes are held, so that their ids stay theirs
        self._parts: dict[int, tuple[Any, StaticPart]] = {}
        self._mixed: dict[int, tuple[Any, MixedPart]] = {}
        self._scan(tree, 0, top=True)

    def get(self, node: Any) -> StaticPart | None:
        found = self._parts.get(id(node))
        return None if found is None or found[0] is not node else found[1]

    def mixed(self, node: Any) -> MixedPart | None:
        """`node`'s parts when it is a container holding templates, else None."""
        found = self._mixed.get(id(node))
        return None if found is None or found[0] is not node else found[1]

    def __len__(self) -> int:
        return len(self._parts)

    @property
    def mixed_count(self) -> int:
        """How many containers holding templates are known."""
        return len(self._mixed)

    def _scan(self, node: Any, depth: int, *, top: bool = False) -> tuple[int, int] | None:
        """(charge, height) of a template-free JSON-shaped `node`, else None; the largest
        template-free containers below a templated one are kept. Past the nesting limit nothing
        is: the render walks there, and says where the tree nests too deeply."""
        kind = type(node)
        if kind is str:
            return None if _TEMPLATE_MARK in node else (text_size(node) + 3, 0)
        if kind in _SCALARS:
            return _MEASURE.size_of(node) + 1, 0
        if depth >= MAX_NESTING:
            return None
        if kind is dict:
            children = list(node.values())
            found = [self._scan(child, depth + 1) for child in children]
            keys_plain = all(type(k) is str and _TEMPLATE_MARK not in k for k in node)
            own = 2 + sum(text_size(k) + 3 for k in node if type(k) is str)
            measured = _combine(found, own)
            static = keys_plain and measured is not None
        elif kind is list:
            children = node
            found = [self._scan(child, depth + 1) for child in children]
            own = 2
            measured = _combine(found, own)
            keys_plain = True
            static = measured is not None
        else:
            return None
        if static and measured is not None:
            if top:
                self._keep(node, measured)
            return measured
        for child, result in zip(children, found, strict=True):
            if result is not None and type(child) in (dict, list):
                self._keep(child, result)
        if keys_plain:
            self._keep_mixed(node, found, own)
        return None

    def _keep(self, node: Any, measured: tuple[int, int]) -> None:
        charge, height = measured
        self._parts[id(node)] = (node, StaticPart(charge, height, marshal.dumps(node)))

    def _keep_mixed(self, node: Any, found: list[tuple[int, int] | None], own: int) -> None:
        steps: list[str | int] = list(node) if type(node) is dict else list(range(len(node)))
        charge, height = own, 0
        others: list[str | int] = []
        for step, result in zip(steps, found, strict=True):
            if result is None:
                others.append(step)
            else:
                charge += result[0]
                height = max(height, result[1])
        shell = node.copy()
        for step in others:
            shell[step] = None
        part = MixedPart(charge, height, marshal.dumps(shell), tuple(others))
        self._mixed[id(node)] = (node, part)


def _combine(found: list[tuple[int, int] | None], own: int) -> tuple[int, int] | None:
    """A container's (charge, height) from its children's, or None if one is not static."""
    charge, height = own, 0
    for result in found:
        if result is None:
            return None
        charge += result[0]
        height = max(height, result[1])
    return charge, height + 1


def shared_static_parts(trees: Sequence[Mapping[str, Any]]) -> dict[int, StaticParts]:
    """The StaticParts of each tree that several of `trees` are (the same object), by its id: a
    tree rendered once would not win back the walk that measures it."""
    uses = Counter(id(tree) for tree in trees)
    found: dict[int, StaticParts] = {}
    for tree in trees:
        if uses[id(tree)] > 1 and id(tree) not in found:
            found[id(tree)] = StaticParts(tree)
    return found
