"""Templates that only look values up, evaluated without running Jinja.

Most templated strings in values are lookups in text: ``${ cluster.labels.region }``,
``${ cluster.name }.${ cluster.labels.region }.example.com``. Running such a string through Jinja
costs far more than the lookups (a context, a generator, the sandbox's attribute checks per
render), and a Bundle renders each of its strings once per cluster. :func:`plain_lookups` finds,
when a string is compiled, whether it is only text and chains of constant lookups from the
cluster's or the bundle's names; :func:`look_up` then evaluates such a chain over the render's
variables with plain dict lookups.

This is a shortcut, never a second semantics: a chain is answered only where the environment
would answer it the same way, a key of a dict found at every step (the environment looks keys up
before attributes on maps). Anything else (a missing key, a list, a method of a map) is
:data:`MISSING`, and the caller renders the string with Jinja as before, which says what is wrong
exactly as it always did. What the value then becomes (native data or text) is the caller's, as
for any expression.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2 import nodes

from bundler.core.templating.reads import ReadPath

#: One piece of a lookup-only template: literal text, or the chain of lookups of a ``${ }``.
Piece = str | ReadPath

#: The names a lookup may start from: the cluster's and the bundle's (not the images, whose
#: answers are guarded views, nor Jinja's globals).
LOOKUP_ROOTS = frozenset(
    {
        "cluster",
        "bundle",
        "ClusterName",
        "ClusterNamespace",
        "ClusterLabels",
        "ClusterAnnotations",
        "ClusterValues",
    }
)

#: What :func:`look_up` answers where the environment might answer differently.
MISSING: Any = object()


def plain_lookups(tree: nodes.Template) -> tuple[Piece, ...] | None:
    """The pieces of a parsed template that is only text and ``${ }`` lookups, else None."""
    match tree.body:
        case [nodes.Output(nodes=children)]:
            pass
        case _:
            return None
    pieces: list[Piece] = []
    for child in children:
        piece = _piece(child)
        if piece is None:
            return None
        pieces.append(piece)
    return tuple(pieces)


def _piece(node: nodes.Node) -> Piece | None:
    if isinstance(node, nodes.TemplateData):
        data: str = node.data
        return data
    return _chain(node)


def _chain(node: nodes.Node) -> ReadPath | None:
    steps: list[str | int] = []
    while True:
        if isinstance(node, nodes.Name):
            if node.ctx != "load" or node.name not in LOOKUP_ROOTS:
                return None
            return (node.name, *reversed(steps))
        if isinstance(node, nodes.Getattr):
            steps.append(node.attr)
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            # a bool is an int to Python but a different key to a reader: left to Jinja
            if type(node.arg.value) not in (str, int):
                return None
            steps.append(node.arg.value)
        else:
            return None
        node = node.node


def look_up(path: ReadPath, variables: Mapping[str, Any]) -> Any:
    """The value at the end of `path` (its first step a name of `variables`), or MISSING where a
    step is not a key of a dict."""
    value: Any = variables
    for step in path:
        if type(value) is not dict:
            return MISSING
        value = value.get(step, MISSING)
        if value is MISSING:
            return MISSING
    return value
