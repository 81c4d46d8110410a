"""Rendering one template, or its error, for the templating tests: a context, render_one,
render_error (with its traceback line) and the count of compiled steps."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from bundler.core.templating import TemplateContext, render_values
from bundler.core.templating.compiler import COMPILE_STEPS_PER_TOKEN
from bundler.core.templating.environment import ENVIRONMENT
from bundler.errors import TemplateError

CAPI_CLUSTER = {
    "apiVersion": "cluster.x-k8s.io/v1beta1",
    "kind": "Cluster",
    "metadata": {"name": "prod-eu-1", "namespace": "fleet-default"},
    "spec": {"topology": {"class": "quick-start", "version": "v1.30.0"}},
}


def context(
    name: str = "prod-eu-1",
    labels: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
) -> TemplateContext:
    return TemplateContext(
        cluster_name=name,
        cluster_namespace="fleet-default",
        cluster_labels={"env": "prod", "region": "eu"} if labels is None else labels,
        cluster_annotations={"owner": "team-a"},
        cluster_values={"tier": "gold", "replicas": 3, "Cluster": CAPI_CLUSTER}
        if values is None
        else values,
        bundle_name="podinfo",
        bundle_namespace="fleet-default",
    )


def render_one(template: Any, ctx: TemplateContext | None = None, **options: Any) -> Any:
    return render_values({"v": template}, ctx or context(), **options)["v"]


def render_error(values: dict[str, Any], ctx: TemplateContext | None = None, **options: Any) -> str:
    with pytest.raises(TemplateError) as raised:
        render_values(values, ctx or context(), **options)
    return str(raised.value)


def render_error_traced(values: dict[str, Any]) -> tuple[str, int]:
    """`render_error`, and the most memory Python allocated at once while it rendered."""
    tracemalloc.start()
    try:
        message = render_error(values)
        return message, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def compile_steps(template: str) -> int:
    """What compiling `template` is charged (the steps before any of it runs)."""
    tokens = sum(1 for _ in ENVIRONMENT.lexer.tokeniter(template, None))
    return tokens * COMPILE_STEPS_PER_TOKEN
