"""Compiling values strings: charged to the render's budget, and cached per Bundle."""

from __future__ import annotations

import pytest

from bundler.core.templating import TemplateCache, render_values
from bundler.core.templating.budget import RenderBudget, RenderLimitError
from bundler.core.templating.compiler import COMPILE_STEPS_PER_TOKEN
from tests.support.core.templating.rendering import (
    compile_steps,
    context,
    render_error,
    render_error_traced,
)

#: Strings whose compiling alone is over one render's budget, though they do nothing.
OVERSIZED = [
    ("many-expressions", "x" + "${ 1 }" * 4000),
    ("one-wide-list", "${ [" + "1," * 20000 + "1] }"),
    ("many-statements", "${% if true %}x${% endif %}" * 2000),
]


@pytest.mark.parametrize("template", [c[1] for c in OVERSIZED], ids=[c[0] for c in OVERSIZED])
def test_compiling_is_charged_to_the_render(template: str) -> None:
    message = render_error({"v": template})
    assert "compiling the template exceeds the limit of" in message
    assert "values.v" in message


def test_an_oversized_template_stops_before_it_is_parsed() -> None:
    template = "x" + "${ 1 }" * 30000  # 180 KB: parsing and compiling it took 2 s and 180 MiB
    message, peak = render_error_traced({"v": template})
    assert "compiling the template" in message
    assert peak < 8 << 20


def test_the_charge_is_the_same_whether_compiled_before_or_not() -> None:
    template = "${ cluster.name ~ '-' ~ cluster.labels.region }"
    needed = compile_steps(template)
    cache = TemplateCache()
    for _ in range(2):  # the first compiles it, the second finds it in the cache
        assert "steps" in render_error({"v": template}, step_limit=needed - 1, templates=cache)
        rendered = render_values(
            {"v": template}, context(), step_limit=needed + 20, templates=cache
        )
        assert rendered == {"v": "prod-eu-1-eu"}


def test_charge_counts_every_token() -> None:
    budget = RenderBudget(1 << 20)
    TemplateCache().compile("b/a", "${ a }", budget)
    # `${`, ` `, `a`, ` `, `}`
    assert budget.steps == 5 * COMPILE_STEPS_PER_TOKEN


def test_one_bundle_cannot_push_out_another_bundles_templates() -> None:
    cache = TemplateCache(bundle_entries=50, total_entries=200)
    budget = RenderBudget(1 << 20, 10**9)
    own = [f"${{ cluster.labels.k{i} }}" for i in range(20)]
    for source in own:
        cache.compile("tenant-a/app", source, budget)
    for i in range(1000):
        cache.compile("tenant-b/noisy", f"${{ {i} }}", budget)
    assert cache.entries_of("tenant-a/app") == 20
    assert cache.entries_of("tenant-b/noisy") == 50
    steps = budget.steps
    for source in own:  # found, not compiled again: charged what it was charged then
        cache.compile("tenant-a/app", source, budget)
    assert cache.entries_of("tenant-a/app") == 20
    assert budget.steps - steps == sum(compile_steps(s) for s in own)


def test_past_the_total_the_least_recently_used_bundle_goes_first() -> None:
    cache = TemplateCache(bundle_entries=10, total_entries=20)
    budget = RenderBudget(1 << 20, 10**9)
    for bundle in ("ws/old", "ws/mid", "ws/new"):
        for i in range(10):
            cache.compile(bundle, f"${{ {i} }}", budget)
    assert len(cache) == 20
    assert [cache.entries_of(b) for b in ("ws/old", "ws/mid", "ws/new")] == [0, 10, 10]


def test_a_failed_charge_keeps_nothing() -> None:
    cache = TemplateCache()
    with pytest.raises(RenderLimitError):
        cache.compile("ws/b", "${ 1 }" * 1000, RenderBudget(1 << 20, 100))
    assert len(cache) == 0
