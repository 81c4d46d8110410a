"""Rendering a Bundle's values for one cluster (design §2).

Every string in the values tree, map keys included, is rendered on its own with the Jinja
sandbox of :mod:`bundler.core.templating.environment` (compiled by
:mod:`bundler.core.templating.compiler`): ``${ expr }`` for expressions, ``${% %}`` for
statements, ``${# #}`` for comments, and ``$${`` for a literal ``${``. A string that is
exactly one ``${ expr }`` keeps the expression's native type; any other string stays a
string. Rendered text is never parsed again, so a cluster label cannot inject structure.
Keys always render to strings. ``$${`` is an escape in the text of a string; inside an
expression a string literal ``"${"`` is already literal and needs no escape.

One call renders one cluster and shares nothing mutable with any other call: a failure is a
:class:`~bundler.errors.TemplateError` naming the bundle, the cluster, the path in the
values and the cause, and is confined to that cluster. The result is a fresh tree that
never aliases the input or the context. What one cluster's values render to is capped
(:data:`DEFAULT_RENDER_LIMIT_BYTES`), and so is the work a template may do, compiling included.
Whoever runs a render under an outer bound (a worker process with a deadline) can follow it with
``on_template``, told where each string is before it is rendered (its path in the values, and
for a map key the key: `field_of` spells it as errors do), so that a render stopped
from outside can still be reported with its path. A tree rendered for several clusters can come
with its template-free parts measured once (:mod:`bundler.core.templating.static_parts`), which
the render then copies whole instead of walking; a string that only looks values up is answered
without running Jinja (:mod:`bundler.core.templating.lookups`).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from jinja2 import TemplateRuntimeError, TemplateSyntaxError, UndefinedError
from jinja2.exceptions import SecurityError

from bundler.core.templating.budget import (
    DEFAULT_STEP_LIMIT,
    MAX_NESTING,
    RenderBudget,
    RenderLimitError,
    text_size,
)
from bundler.core.templating.compiler import RESULT, TEMPLATES, CompiledTemplate, TemplateCache
from bundler.core.templating.convert import NotAValueError, preview, to_plain, to_text
from bundler.core.templating.environment import ENVIRONMENT
from bundler.core.templating.gotemplate import fleet_syntax_hint
from bundler.core.templating.guards import BUDGET_VARIABLE
from bundler.core.templating.images import (
    ImageNotResolved,
    ImageNotResolvedError,
    ImageView,
    TemplateImages,
)
from bundler.core.templating.lookups import MISSING, Piece, look_up
from bundler.core.templating.reads import ReadPath, ValuesReads
from bundler.core.templating.static_parts import StaticParts
from bundler.errors import TemplateError

DEFAULT_RENDER_LIMIT_BYTES = 1 << 20

_TEMPLATE_MARK = "${"
# `$${` is written as an expression that prints `${`, so it works in text and statements alike
_LITERAL_OPENER = ("$${", '${ "${" }')
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MISSING_NAME_HELP = (
    "use `| default(...)` for optional values; it covers a whole chain of keys"
    ' (`${ cluster.values.ingress.className | default("nginx") }`);'
    " if this `${` is meant for the application, write `$${` to get a literal `${`, or set"
    " disableTemplating: true in spec.helm (or spec.kustomize) to pass this bundle's templates"
    " verbatim"
)

#: Where a string is in a values tree: the keys and indexes that lead to it.
Path = tuple[str | int, ...]
_Path = Path
#: Jinja's globals (`range`, `dict`, ...), merged into each render's variables once.
_GLOBALS = dict(ENVIRONMENT.globals)


@dataclass(frozen=True)
class TemplateContext:
    """What a template sees of the cluster and the bundle it is rendered for."""

    cluster_name: str
    cluster_namespace: str
    cluster_labels: Mapping[str, str]
    cluster_annotations: Mapping[str, str]
    cluster_values: Mapping[str, Any]
    bundle_name: str
    bundle_namespace: str
    # The Bundle's images as this cluster sees them (bundler.core.images.wanted), by name.
    images: Mapping[str, ImageView] = field(default_factory=dict)

    @property
    def bundle(self) -> str:
        """``namespace/name`` of the Bundle: what compiled templates are kept under."""
        return f"{self.bundle_namespace}/{self.bundle_name}"

    def describe(self) -> str:
        """The render's object, as errors name it."""
        return (
            f"Bundle {self.bundle_namespace}/{self.bundle_name}"
            f" for Cluster {self.cluster_namespace}/{self.cluster_name}"
        )


def render_values(
    values: Mapping[str, Any],
    context: TemplateContext,
    *,
    limit_bytes: int = DEFAULT_RENDER_LIMIT_BYTES,
    step_limit: int = DEFAULT_STEP_LIMIT,
    templates: TemplateCache = TEMPLATES,
    on_template: Callable[[Path, str | None], None] | None = None,
) -> dict[str, Any]:
    """Render every string and key of a values tree for one cluster. Raises TemplateError.

    ``limit_bytes`` caps the rendered tree (a rough JSON size) and anything a template builds
    on the way; ``step_limit`` caps loop iterations plus calls. Compiled strings are kept in
    ``templates``; ``on_template`` is told the path of each string holding a template (and the
    key, for a map key) before it is rendered.
    """
    return _render_tree(values, context, "values", limit_bytes, step_limit, templates, on_template)


def render_fields(
    fields: Mapping[str, Any],
    context: TemplateContext,
    *,
    limit_bytes: int = DEFAULT_RENDER_LIMIT_BYTES,
    step_limit: int = DEFAULT_STEP_LIMIT,
    templates: TemplateCache = TEMPLATES,
    on_template: Callable[[Path, str | None], None] | None = None,
    statics: StaticParts | None = None,
) -> dict[str, Any]:
    """render_values for several fields of `helm` at once (``{"values": ..., "postRenderers":
    ...}``), under one budget; errors name the path from the field (``postRenderers[0]...``).
    ``statics``: the template-free parts of `fields`, when it renders for several clusters."""
    render = _ClusterRender(
        context, RenderBudget(limit_bytes, step_limit), "", templates, on_template, statics
    )
    return render.root(fields)


def _render_tree(
    tree: Mapping[str, Any],
    context: TemplateContext,
    root: str,
    limit_bytes: int,
    steps: int,
    templates: TemplateCache,
    on_template: Callable[[Path, str | None], None] | None,
) -> dict[str, Any]:
    budget = RenderBudget(limit_bytes, steps)
    return _ClusterRender(context, budget, root, templates, on_template, None).root(tree)


class _ClusterRender:
    """One render of one values tree for one cluster."""

    def __init__(
        self,
        context: TemplateContext,
        budget: RenderBudget,
        root: str,
        templates: TemplateCache,
        on_template: Callable[[Path, str | None], None] | None,
        statics: StaticParts | None,
    ) -> None:
        self._context = context
        self._budget = budget
        self._root = root
        self._templates = templates
        self._on_template = on_template
        self._statics = statics
        self._mixed_whole = True

    @functools.cached_property
    def _variables(self) -> dict[str, Any]:
        # built on the first template only: most strings have none
        return _template_variables(self._context, self._budget)

    def root(self, tree: Mapping[str, Any]) -> dict[str, Any]:
        if self._statics is not None and self._statics.mixed_count:
            mark = self._budget.mark()
            try:
                return cast(dict[str, Any], self.tree(tree, ()))
            except MemoryError:
                raise
            except Exception:
                if not self._budget.out_of_room:
                    raise
            # charged in another order, the room could have run out elsewhere: walk in order
            self._budget.rewind(mark)
            self._mixed_whole = False
        whole = self._whole(tree, ())
        return self.mapping(tree, ()) if whole is None else cast(dict[str, Any], whole)

    def mapping(self, node: Mapping[Any, Any], path: _Path) -> dict[Any, Any]:
        self._check_depth(path)
        self._charge(2, path)
        rendered: dict[Any, Any] = {}
        for key, child in node.items():
            name = self._key(key, path) if isinstance(key, str) else copy.deepcopy(key)
            if name in rendered:
                message = f"the key renders to {name!r}, which this map already has"
                raise self._error(path, key, message)
            rendered[name] = self.tree(child, (*path, key if isinstance(key, str) else str(key)))
        return rendered

    def tree(self, node: Any, path: _Path) -> Any:
        if isinstance(node, str):
            return self._string(node, path)
        if isinstance(node, Mapping):
            whole = self._whole(node, path)
            if whole is None:
                whole = self._mixed(node, path)
            return self.mapping(node, path) if whole is None else whole
        if isinstance(node, list | tuple):
            whole = self._whole(node, path)
            if whole is None:
                whole = self._mixed(node, path)
            if whole is not None:
                return whole
            self._check_depth(path)
            self._charge(2, path)
            return [self.tree(item, (*path, index)) for index, item in enumerate(node)]
        self._charge(self._budget.size_of(node) + 1, path)
        return copy.deepcopy(node)  # scalars come back as they are; anything else is copied

    def _whole(self, node: Any, path: _Path) -> Any:
        """A fresh copy of `node` when it is a known template-free part that fits the budget and
        the nesting limit whole (None: walk it, which reports a limit where it is reached)."""
        part = None if self._statics is None else self._statics.get(node)
        if part is None or len(path) + part.height > MAX_NESTING:
            return None
        try:
            self._budget.charge(part.charge, "the values")
        except RenderLimitError:
            return None
        return part.copy()

    def _mixed(self, node: Any, path: _Path) -> Any:
        """A container holding templates, its template-free parts copied and charged at once
        before its templates render (None: walk it). Charging them first can only refuse room
        sooner than the walk, and then `root` walks the whole tree again, in order."""
        part = None if self._statics is None or not self._mixed_whole else self._statics.mixed(node)
        if part is None or len(path) + 1 + part.height > MAX_NESTING:
            return None
        self._charge(part.charge, path)
        rendered = part.copy()
        for step in part.others:
            rendered[step] = self.tree(node[step], (*path, step))
        return rendered

    def _string(self, source: str, path: _Path) -> Any:
        if _TEMPLATE_MARK not in source:
            self._charge(text_size(source) + 3, path)
            return source
        if self._on_template is not None:
            self._on_template(path, None)
        try:
            return self._render(source)
        except ImageNotResolved as unresolved:
            raise self._held(path, None, unresolved) from None
        except MemoryError:
            raise  # an outer bound's to report: the process may not go on
        except Exception as error:  # whatever a template does wrong is this cluster's error
            raise self._error(path, None, _describe(error, source)) from error

    def _key(self, source: str, path: _Path) -> str:
        if _TEMPLATE_MARK not in source:
            self._charge(text_size(source) + 3, path)
            return source
        if self._on_template is not None:
            self._on_template(path, source)
        try:
            value = self._render(source)
            return value if isinstance(value, str) else to_text(value, self._budget)
        except ImageNotResolved as unresolved:
            raise self._held(path, source, unresolved) from None
        except MemoryError:
            raise
        except Exception as error:
            raise self._error(path, source, _describe(error, source)) from error

    def _render(self, source: str) -> Any:
        source = source.replace(*_LITERAL_OPENER)
        compiled = self._templates.compile(self._context.bundle, source, self._budget)
        if compiled.native:
            value = to_plain(self._value(compiled), self._budget)
            self._budget.charge(self._budget.size_of(value) + 1, "the expression")
            return value
        pieces: list[str] = []
        size = 3
        for piece in self._text(compiled):
            size += text_size(piece)
            self._budget.require_room(size, "the rendered text")
            pieces.append(piece)
        self._budget.charge(size, "the rendered text")
        return "".join(pieces)

    def _value(self, compiled: CompiledTemplate) -> Any:
        """What a whole-string expression evaluates to."""
        if compiled.lookups is not None:
            value = look_up(cast(ReadPath, compiled.lookups[0]), self._variables)
            if value is not MISSING:
                return value
        # shared: the variables already hold the globals, so Jinja need not merge them per string
        module = compiled.template.make_module(self._variables, shared=True)
        return getattr(module, RESULT)

    def _text(self, compiled: CompiledTemplate) -> Iterator[str]:
        """The pieces of text a template writes, each converted as it is written."""
        if compiled.lookups is not None:
            found = [
                piece if isinstance(piece, str) else look_up(piece, self._variables)
                for piece in compiled.lookups
            ]
            if all(value is not MISSING for value in found):
                return self._written(compiled.lookups, found)
        context = compiled.template.new_context(self._variables, shared=True)
        return compiled.template.root_render_func(context)

    def _written(self, pieces: tuple[Piece, ...], found: list[Any]) -> Iterator[str]:
        for piece, value in zip(pieces, found, strict=True):
            yield value if isinstance(piece, str) else to_text(value, self._budget)

    def _charge(self, size: int, path: _Path) -> None:
        try:
            self._budget.charge(size, "the values")
        except RenderLimitError as error:
            raise self._error(path, None, str(error)) from error

    def _check_depth(self, path: _Path) -> None:
        if len(path) >= MAX_NESTING:
            raise self._error(path, None, f"values nested more than {MAX_NESTING} levels deep")

    def _error(self, path: _Path, key: str | None, message: str) -> TemplateError:
        return TemplateError(message, obj=self._obj(), field=_field(path, key, self._root))

    def _held(
        self, path: _Path, key: str | None, unresolved: ImageNotResolved
    ) -> ImageNotResolvedError:
        return ImageNotResolvedError(
            unresolved.name,
            unresolved.reason,
            unresolved.message,
            obj=self._obj(),
            field=_field(path, key, self._root),
        )

    def _obj(self) -> str:
        return self._context.describe()


def field_of(path: Path, key: str | None, root: str = "") -> str:
    """Where a string is, as errors name it: ``values.a[0]`` (map key ``'k'``); `root` is what
    the rendered tree is (empty: the tree of a release's templated fields, keyed by field)."""
    return _field(path, key, root)


def _field(path: _Path, key: str | None, root: str) -> str:
    where = format_path(path, root)
    if key is not None:
        where += f" (map key {preview(key)!r})"
    return where


def format_path(path: _Path, root: str = "values") -> str:
    """``values.ingress.hosts[0]``, with keys that are not identifiers quoted; with an empty
    `root`, the first key starts the path."""
    text = root
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def _template_variables(context: TemplateContext, budget: RenderBudget) -> dict[str, Any]:
    return {**_GLOBALS, **context_variables(context, render=True), BUDGET_VARIABLE: budget}


def context_variables(context: TemplateContext, *, render: bool = False) -> dict[str, Any]:
    """The names a template sees of the cluster, the bundle and the images. For a `render`, the
    maps are copies and `images` the guarded view; otherwise (to key renders by what they read)
    the context's own maps and the image answers themselves."""
    labels = dict(context.cluster_labels) if render else context.cluster_labels
    annotations = dict(context.cluster_annotations) if render else context.cluster_annotations
    values = dict(context.cluster_values) if render else context.cluster_values
    return {
        "cluster": {
            "name": context.cluster_name,
            "namespace": context.cluster_namespace,
            "labels": labels,
            "annotations": annotations,
            "values": values,
        },
        "bundle": {"name": context.bundle_name, "namespace": context.bundle_namespace},
        "images": TemplateImages(context.images) if render else context.images,
        # Fleet's spellings
        "ClusterName": context.cluster_name,
        "ClusterNamespace": context.cluster_namespace,
        "ClusterLabels": labels,
        "ClusterAnnotations": annotations,
        "ClusterValues": values,
    }


def values_reads(
    values: Mapping[str, Any], bundle: str, templates: TemplateCache = TEMPLATES
) -> ValuesReads:
    """Whether a values tree holds templates and what they read: renders of it for contexts
    that agree on those reads are equal (see :mod:`bundler.core.templating.reads`). Compiling
    its strings is charged to one render's budget: past it, or when a string does not compile,
    what they read is not told (every render then reports why, with its path)."""
    sources = set()
    for source in _template_strings(values, 0):
        if source is None:
            return ValuesReads(True, None)
        sources.add(source)
    paths: set[ReadPath] = set()
    budget = RenderBudget(DEFAULT_RENDER_LIMIT_BYTES, DEFAULT_STEP_LIMIT)
    for source in sorted(sources):
        try:
            paths |= templates.compile(bundle, source.replace(*_LITERAL_OPENER), budget).reads
        except MemoryError:
            raise
        except Exception:  # the render reports it, with its path
            return ValuesReads(True, None)
    return ValuesReads(bool(sources), tuple(sorted(paths, key=repr)))


def has_templates(values: Mapping[str, Any]) -> bool:
    """Whether a values tree holds a string or key with ``${`` (or nests too deeply to tell)."""
    return next(_template_strings(values, 0), False) is not False


def _template_strings(node: Any, depth: int) -> Iterator[str | None]:
    """The strings and keys holding `${` (None where the tree nests too deeply to look)."""
    if isinstance(node, str):
        if _TEMPLATE_MARK in node:
            yield node
    elif depth >= MAX_NESTING:
        yield None
    elif isinstance(node, Mapping):
        for key, child in node.items():
            yield from _template_strings(key, depth + 1)
            yield from _template_strings(child, depth + 1)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from _template_strings(item, depth + 1)


def _describe(error: Exception, source: str) -> str:
    """What went wrong, and when `source` is Fleet's Go-template syntax, that it is and how to
    write it."""
    hint = fleet_syntax_hint(source)
    message = _cause(error)
    return message if hint is None else f"{message}; {hint}"


def _cause(error: Exception) -> str:
    if isinstance(error, UndefinedError):
        return f"{error.message}; {_MISSING_NAME_HELP}"
    if isinstance(error, SecurityError):
        return f"not allowed in the template sandbox: {error.message}"
    if isinstance(error, TemplateSyntaxError):
        return f"invalid template: {error.message} (line {error.lineno})"
    if isinstance(error, RecursionError):
        return "the template nests too deeply"
    if isinstance(error, RenderLimitError | NotAValueError | TemplateRuntimeError):
        return str(error)
    return f"{type(error).__name__}: {error}"
