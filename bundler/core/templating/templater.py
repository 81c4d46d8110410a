"""How planning asks for renders: a :class:`Templater` renders a batch of clusters' templated
fields (values, post-renderers, common metadata: bundler.core.templating.fields).

Planning stays pure by taking the templater as a parameter. :data:`IN_PROCESS` renders in the
calling process, bounded by the step budget alone (core's tests, the budget's own benchmark);
the manager and the commands hand planning a pool of worker processes that the operating system
bounds as well (bundler.templating_pool), which answers the same way: one answer per call, in
order, each the rendered tree or the TemplateError of that cluster alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bundler.core.templating.compiler import TEMPLATES, TemplateCache
from bundler.core.templating.reads import ValuesReads
from bundler.core.templating.render import TemplateContext, render_fields, values_reads
from bundler.core.templating.static_parts import shared_static_parts
from bundler.errors import TemplateError


@dataclass(frozen=True)
class RenderCall:
    """One cluster's templated fields to render (a tree keyed by field, as
    bundler.core.templating.fields builds it), with what the templates see of it."""

    tree: Mapping[str, Any]
    context: TemplateContext


#: The rendered tree, or why this cluster's did not render.
RenderAnswer = dict[str, Any] | TemplateError


class Templater(Protocol):
    """Renders trees of templated fields; never raises a TemplateError (it is that call's
    answer)."""

    def reads(self, bundle: str, values: Mapping[str, Any]) -> ValuesReads:
        """What the templates of the tree ``values`` (of the Bundle ``namespace/name``) read."""
        ...

    def render(self, calls: Sequence[RenderCall]) -> list[RenderAnswer]:
        """An answer per call, in order."""
        ...


class InProcessTemplater:
    """Renders in the calling process: bounded by the step budget, not by the OS."""

    def __init__(self, templates: TemplateCache = TEMPLATES) -> None:
        self._templates = templates

    def reads(self, bundle: str, values: Mapping[str, Any]) -> ValuesReads:
        return values_reads(values, bundle, self._templates)

    def render(self, calls: Sequence[RenderCall]) -> list[RenderAnswer]:
        answers: list[RenderAnswer] = []
        statics = shared_static_parts([call.tree for call in calls])
        for call in calls:
            try:
                answers.append(
                    render_fields(
                        call.tree,
                        call.context,
                        templates=self._templates,
                        statics=statics.get(id(call.tree)),
                    )
                )
            except TemplateError as error:
                answers.append(error)
        return answers


IN_PROCESS = InProcessTemplater()
