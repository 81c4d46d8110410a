"""Per-cluster values templating: the Jinja sandbox, its budget and its guards (design §2).

:mod:`~bundler.core.templating.render` walks a values tree and renders each string;
:mod:`~bundler.core.templating.environment` is the sandbox; :mod:`~bundler.core.templating.compiler`
compiles a string and inserts the guards of :mod:`~bundler.core.templating.guards`, which charge
the per-render :mod:`~bundler.core.templating.budget`; :mod:`~bundler.core.templating.convert`
turns results into plain data and text; :mod:`~bundler.core.templating.reads` tells what a values
tree's templates read, so renders can be memoised per distinct input;
:mod:`~bundler.core.templating.fields` extends the render to a release's post-renderers (patches
read as YAML first) and common metadata; :mod:`~bundler.core.templating.templater` is how
planning asks for renders (in this process, or through a bounded worker pool that implements the
same protocol); :mod:`~bundler.core.templating.gotemplate` reads Fleet's Go-template values,
converts their common forms, and gives the hint a template error on Fleet's syntax carries.
"""

from bundler.core.templating.compiler import TemplateCache
from bundler.core.templating.render import (
    DEFAULT_RENDER_LIMIT_BYTES,
    TemplateContext,
    format_path,
    has_templates,
    render_fields,
    render_values,
    values_reads,
)

__all__ = [
    "DEFAULT_RENDER_LIMIT_BYTES",
    "TemplateCache",
    "TemplateContext",
    "format_path",
    "has_templates",
    "render_fields",
    "render_values",
    "values_reads",
]
