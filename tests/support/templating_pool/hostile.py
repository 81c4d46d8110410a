"""Values templates that reach past what the step budget foresees, for the workers' tests."""

from __future__ import annotations

from bundler.core.templating import TemplateContext
from bundler.core.templating.templater import RenderCall

#: Holds 40 strings of 1 MB at once: about 40,000 steps, far over a tight memory limit.
HOLDS_40_MB = "".join(f"${{% set a{i} = 'x' * 1000000 %}}" for i in range(40)) + "done"
#: Runs the slowest filter on the largest text the step budget allows until the budget stops it:
#: a few tenths of a second.
SLOW = (
    "${% set s = 'a' * 100000 %}${% for i in range(100000) %}"
    "${% set r = (s | replace('aa', 'a ')) | wordwrap(1) %}${% endfor %}"
)
#: Some milliseconds of work (a few hundred loop iterations over a short text).
BUSY = "${% for i in range(300) %}${ (cluster.name * 20) | title | length }${% endfor %}"


def context(name: str, labels: dict[str, str] | None = None) -> TemplateContext:
    return TemplateContext(
        cluster_name=name,
        cluster_namespace="ws",
        cluster_labels=labels or {"region": "eu"},
        cluster_annotations={},
        cluster_values={"replicas": 3},
        bundle_name="app",
        bundle_namespace="ws",
    )


def call(template: str, name: str = "c", path: str = "v") -> RenderCall:
    return RenderCall({"values": {"outer": {path: template}}}, context(name))
