"""Compiling one values string: guards inserted, unsupported constructs refused, cached.

The sandbox intercepts attribute access, calls and some operators, but not ``~``, filters,
loops, literals or comparisons; the compiler rewrites those to go through the guards of
:mod:`bundler.core.templating.guards` under names no template can spell. Macros, blocks,
includes and other constructs values never need are refused: they would buffer output out
of sight of the size checks.

A string that is exactly one ``${ expr }`` compiles to an assignment, so its value is read
back with its native type.

Compiling costs far more than the text it reads (Jinja's lexer and parser, then Python's
compiler: some 20-50 µs per token; a 600 KB string of ``${ 1 }`` took 8 s and 550 MiB), so it is
charged to the render's budget: :data:`COMPILE_STEPS_PER_TOKEN` steps per token, counted as the
lexer reads them, so an oversized template stops before it is parsed. The charge is the same
whether the string was compiled before or is found in the cache, so a render's outcome never
depends on what other renders compiled.

The same bundle values render for hundreds of clusters, so compiled strings are kept in a
:class:`TemplateCache` (a string-keyed memo of a pure function, safe to share between renders),
bounded per Bundle and in total: one Bundle's strings only ever evict its own, so a tenant writing
endless distinct strings cannot push out everyone else's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from jinja2 import Template, TemplateSyntaxError, nodes
from jinja2.visitor import NodeTransformer

from bundler.core.templating.budget import RenderBudget
from bundler.core.templating.environment import ENVIRONMENT, REFUSED_FILTERS, refused_filter_message
from bundler.core.templating.guards import Guard
from bundler.core.templating.lookups import Piece, plain_lookups
from bundler.core.templating.reads import ReadPath, reads_of

#: The variable a whole-string expression is assigned to, to read back its native value.
RESULT = "result"
#: Steps charged per token a template's source holds (whitespace and text runs included).
COMPILE_STEPS_PER_TOKEN = 6
#: Tokens are counted, and charged, in runs of this many.
_TOKEN_RUN = 256
#: What the cache keeps of one Bundle, and in all.
BUNDLE_ENTRIES = 256
BUNDLE_SOURCE_CHARS = 1 << 20
TOTAL_ENTRIES = 4096
TOTAL_SOURCE_CHARS = 8 << 20

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
    #: The steps compiling it is charged.
    steps: int
    #: Its pieces when it is only text and lookups (bundler.core.templating.lookups), else None.
    lookups: tuple[Piece, ...] | None = None


class TemplateCache:
    """Least recently used compiled templates, kept per Bundle: at most ``bundle_entries``
    strings (and ``bundle_chars`` of source) of one Bundle, ``total_entries`` (and
    ``total_chars``) in all; past the total, the least recently used Bundle's go first."""

    def __init__(
        self,
        *,
        bundle_entries: int = BUNDLE_ENTRIES,
        bundle_chars: int = BUNDLE_SOURCE_CHARS,
        total_entries: int = TOTAL_ENTRIES,
        total_chars: int = TOTAL_SOURCE_CHARS,
    ) -> None:
        self._bundle_entries = bundle_entries
        self._bundle_chars = bundle_chars
        self._total_entries = total_entries
        self._total_chars = total_chars
        self._bundles: OrderedDict[str, OrderedDict[str, CompiledTemplate]] = OrderedDict()
        self._chars: dict[str, int] = {}
        self._entries = 0
        self._all_chars = 0
        self._lock = threading.Lock()

    def compile(self, bundle: str, source: str, budget: RenderBudget) -> CompiledTemplate:
        """``source`` of ``bundle`` compiled, its compilation charged to ``budget``.
        Raises TemplateSyntaxError, or RenderLimitError before compiling what is over budget."""
        compiled = self._get(bundle, source)
        if compiled is not None:
            budget.step("compiling the template", compiled.steps)
            return compiled
        compiled = _compile(source, _charged_tokens(source, budget))
        self._put(bundle, source, compiled)
        return compiled

    def __len__(self) -> int:
        return self._entries

    def entries_of(self, bundle: str) -> int:
        """How many of ``bundle``'s strings are kept."""
        with self._lock:
            return len(self._bundles.get(bundle, ()))

    def _get(self, bundle: str, source: str) -> CompiledTemplate | None:
        with self._lock:
            entries = self._bundles.get(bundle)
            compiled = entries.get(source) if entries is not None else None
            if compiled is not None:
                assert entries is not None
                entries.move_to_end(source)
                self._bundles.move_to_end(bundle)
            return compiled

    def _put(self, bundle: str, source: str, compiled: CompiledTemplate) -> None:
        if len(source) > self._bundle_chars:
            return
        with self._lock:
            entries = self._bundles.setdefault(bundle, OrderedDict())
            self._bundles.move_to_end(bundle)
            if source in entries:
                return
            entries[source] = compiled
            self._chars[bundle] = self._chars.get(bundle, 0) + len(source)
            self._entries += 1
            self._all_chars += len(source)
            while len(entries) > self._bundle_entries or self._chars[bundle] > self._bundle_chars:
                self._evict(bundle)
            while self._entries > self._total_entries or self._all_chars > self._total_chars:
                self._evict(next(iter(self._bundles)))

    def _evict(self, bundle: str) -> None:
        """Drop the least recently used string of ``bundle`` (the lock is held)."""
        entries = self._bundles[bundle]
        source, _ = entries.popitem(last=False)
        self._chars[bundle] -= len(source)
        self._entries -= 1
        self._all_chars -= len(source)
        if not entries:
            del self._bundles[bundle]
            del self._chars[bundle]


#: The cache renders use unless given another.
TEMPLATES = TemplateCache()


def _charged_tokens(source: str, budget: RenderBudget) -> int:
    """The steps compiling ``source`` costs, charged to ``budget`` as its tokens are read."""
    tokens = 0
    for tokens, _ in enumerate(ENVIRONMENT.lexer.tokeniter(source, None), start=1):
        if tokens % _TOKEN_RUN == 0:
            budget.step("compiling the template", _TOKEN_RUN * COMPILE_STEPS_PER_TOKEN)
    steps = tokens * COMPILE_STEPS_PER_TOKEN
    budget.step("compiling the template", (tokens % _TOKEN_RUN) * COMPILE_STEPS_PER_TOKEN)
    return steps


def _compile(source: str, steps: int) -> CompiledTemplate:
    tree = ENVIRONMENT.parse(source)
    _reject_unsupported(tree)
    reads = reads_of(tree)
    lookups = plain_lookups(tree)
    expression = _whole_expression(tree)
    if expression is not None:
        tree = nodes.Template([nodes.Assign(nodes.Name(RESULT, "store"), expression)], lineno=1)
    tree = _Guards().visit(tree)
    tree.set_lineno(1)
    tree.set_environment(ENVIRONMENT)
    template = ENVIRONMENT.from_string(tree)
    native = expression is not None
    return CompiledTemplate(template, native=native, reads=reads, steps=steps, lookups=lookups)


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
    """Routes filters, ``~``, loops, literals, comparisons and slices through the guards; a loop
    is charged per item the nodes of its body."""

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
        cost = _nodes_in([*node.body, *node.else_, *([node.test] if node.test else [])])
        self.generic_visit(node)
        node.iter = _guard(Guard.LOOP, node.iter, nodes.Const(cost))
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

    def visit_Getitem(self, node: nodes.Getitem) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        # `obj[a:b]` copies what it returns; `obj[key]` returns what exists
        return _guard(Guard.SLICE, node) if isinstance(node.arg, nodes.Slice) else node

    def visit_List(self, node: nodes.List) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.LITERAL, node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.LITERAL, node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:  # noqa: N802
        self.generic_visit(node)
        return _guard(Guard.LITERAL, node) if node.ctx == "load" else node


def _guard(name: Guard, node: nodes.Node, *args: nodes.Expr) -> nodes.Filter:
    # the compiler writes the name with repr(): a plain str, not the enum member
    return nodes.Filter(node, name.value, list(args), [], None, None, lineno=node.lineno)


def _nodes_in(parts: list[nodes.Node]) -> int:
    """How many nodes `parts` hold, themselves included: what running them once is charged."""
    return max(1, sum(1 + sum(1 for _ in part.find_all(nodes.Node)) for part in parts))
