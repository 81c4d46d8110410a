"""Compiling one values string: guards inserted, unsupported constructs refused, cached.

The sandbox intercepts attribute access, calls and some operators, but not ``~``, filters,
loops, literals or comparisons; the compiler rewrites those to go through the guards of
:mod:`bundler.core.templating.guards` under names no template can spell. Macros, blocks,
includes and other constructs values never need are refused: they would buffer output out
of sight of the size checks.

A string that is exactly one ``${ expr }`` compiles to an assignment, so its value is read
back with its native type. Each distinct string is compiled once and kept in a cache
bounded by entries and by source size, because the same bundle values render for hundreds
of clusters (a string-keyed memo of a pure function, safe to share between renders).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from jinja2 import Template, TemplateSyntaxError, nodes
from jinja2.visitor import NodeTransformer

from bundler.core.templating.environment import ENVIRONMENT, REFUSED_FILTERS, refused_filter_message
from bundler.core.templating.guards import Guard
from bundler.core.templating.reads import ReadPath, reads_of

#: The variable a whole-string expression is assigned to, to read back its native value.
RESULT = "result"
_CACHE_ENTRIES = 4096
_CACHE_SOURCE_CHARS = 8 << 20

_UNSUPPORTED: dict[type[nodes.Node], str] = {
    nodes.Macro: "${% macro %}",
    nodes.CallBlock: "${% call %}",
    nodes.FilterBlock: "${% filter %}",
    nodes.AssignBlock: "${% set %} ... ${% endset %}",
    nodes.Block: "${% block %}",
    nodes.Extends: "${% extends %}",
    nodes.Include: "${% include %}",
    nodes.Import: "${% import %}",
    nodes.FromImport: "${% from ... import %}",
}


@dataclass(frozen=True)
class CompiledTemplate:
    """One values string, compiled."""

    template: Template
    #: The string is exactly one ``${ expr }``: its value keeps its type, read from RESULT.
    native: bool
    #: What it reads of the context (see :mod:`bundler.core.templating.reads`).
    reads: frozenset[ReadPath]


class _CompiledCache:
    """Least recently used compiled templates, bounded by count and by total source size."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._entries: OrderedDict[str, CompiledTemplate] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, source: str) -> CompiledTemplate | None:
        with self._lock:
            compiled = self._entries.get(source)
            if compiled is not None:
                self._entries.move_to_end(source)
            return compiled

    def put(self, source: str, compiled: CompiledTemplate) -> None:
        if len(source) > self._max_chars:
            return
        with self._lock:
            if source in self._entries:
                return
            self._entries[source] = compiled
            self._chars += len(source)
            while len(self._entries) > self._max_entries or self._chars > self._max_chars:
                evicted, _ = self._entries.popitem(last=False)
                self._chars -= len(evicted)


_CACHE = _CompiledCache(_CACHE_ENTRIES, _CACHE_SOURCE_CHARS)


def compile_template(source: str) -> CompiledTemplate:
    """``source`` compiled with its guards in place. Raises TemplateSyntaxError."""
    compiled = _CACHE.get(source)
    if compiled is None:
        compiled = _compile(source)
        _CACHE.put(source, compiled)
    return compiled


def _compile(source: str) -> CompiledTemplate:
    tree = ENVIRONMENT.parse(source)
    _reject_unsupported(tree)
    reads = reads_of(tree)
    expression = _whole_expression(tree)
    if expression is not None:
        tree = nodes.Template([nodes.Assign(nodes.Name(RESULT, "store"), expression)], lineno=1)
    tree = _Guards().visit(tree)
    tree.set_lineno(1)
    tree.set_environment(ENVIRONMENT)
    template = ENVIRONMENT.from_string(tree)
    return CompiledTemplate(template, native=expression is not None, reads=reads)


def _reject_unsupported(tree: nodes.Template) -> None:
    for node in tree.find_all(tuple(_UNSUPPORTED)):
        raise TemplateSyntaxError(
            f"{_UNSUPPORTED[type(node)]} is not supported in values templates", node.lineno
        )
    for loop in tree.find_all(nodes.For):
        if loop.recursive:
            raise TemplateSyntaxError(
                "recursive loops are not supported in values templates", loop.lineno
            )


def _whole_expression(tree: nodes.Template) -> nodes.Expr | None:
    match tree.body:
        case [nodes.Output(nodes=[expression])] if not isinstance(expression, nodes.TemplateData):
            return expression
    return None


class _Guards(NodeTransformer):
    """Routes filters, ``~``, loops, literals and comparisons through the guards."""

    def visit_Filter(self, node: nodes.Filter) -> nodes.Node:  # noqa: N802 (visitor protocol)
        self.generic_visit(node)
        if node.name in REFUSED_FILTERS:
            raise TemplateSyntaxError(refused_filter_message(node.name), node.lineno)
        if node.name not in ENVIRONMENT.filters:
            raise TemplateSyntaxError(f"no filter named {node.name!r}", node.lineno)
        arguments = [nodes.Const(node.name), *node.args]
        return nodes.Filter(
            node.node,
            Guard.FILTER.value,
            arguments,
            node.kwargs,
            node.dyn_args,
            node.dyn_kwargs,
            lineno=node.lineno,
        )

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.CONCAT, nodes.List(node.nodes, lineno=node.lineno))

    def visit_For(self, node: nodes.For) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        node.iter = _guard(Guard.LOOP, node.iter)
        return node

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        node.expr = _guard(Guard.OPERAND, node.expr)
        for operand in node.ops:
            operand.expr = _guard(Guard.OPERAND, operand.expr)
        return node

    def visit_Test(self, node: nodes.Test) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        node.node = _guard(Guard.OPERAND, node.node)
        node.args = [_guard(Guard.OPERAND, argument) for argument in node.args]
        return node

    def visit_List(self, node: nodes.List) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.LITERAL, node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.LITERAL, node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.LITERAL, node) if node.ctx == "load" else node


def _guard(name: Guard, node: nodes.Node) -> nodes.Filter:
    # the compiler writes the name with repr(): a plain str, not the enum member
    return nodes.Filter(node, name.value, [], [], None, None, lineno=node.lineno)
