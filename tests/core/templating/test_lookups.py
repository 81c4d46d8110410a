"""Lookup-only templates: which strings are evaluated without Jinja, and that they render, or
fail, exactly as Jinja renders the same lookups."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.templating import TemplateCache, TemplateContext, render_values
from bundler.core.templating.budget import RenderBudget
from bundler.core.templating.lookups import MISSING, look_up
from bundler.errors import TemplateError
from tests.support.core.templating.rendering import context

# (id, template, its pieces when it is lookup-only, else None)
COMPILED = [
    ("one-lookup", "${ cluster.labels.region }", (("cluster", "labels", "region"),)),
    ("fleet-name", "${ ClusterLabels.region }", (("ClusterLabels", "region"),)),
    ("item", '${ cluster.labels["app.kubernetes.io/part-of"] }',
     (("cluster", "labels", "app.kubernetes.io/part-of"),)),
    ("index", "${ cluster.values.list[0] }", (("cluster", "values", "list", 0),)),
    ("in-text", "${ cluster.name }.${ bundle.name }.example.com",
     (("cluster", "name"), ".", ("bundle", "name"), ".example.com")),
    ("whitespace-control", "a ${- cluster.name -} b", ("a", ("cluster", "name"), "b")),
    ("a-root", "${ cluster }", (("cluster",),)),
    ("filter", "${ cluster.name | upper }", None),
    ("images", "${ images.app.tag }", None),
    ("global", "${ range }", None),
    ("computed-item", "${ cluster.labels[cluster.name] }", None),
    ("bool-item", "${ cluster.values[true] }", None),
    ("statement", "${% if true %}${ cluster.name }${% endif %}", None),
    ("literal-opener", "$${ kept }", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("template", "pieces"), [c[1:] for c in COMPILED], ids=[c[0] for c in COMPILED]
)
def test_only_text_and_lookups_from_the_cluster_and_bundle_are_taken(
    template: str, pieces: tuple[Any, ...] | None
) -> None:
    source = template.replace("$${", '${ "${" }')
    compiled = TemplateCache().compile("ws/b", source, RenderBudget(1 << 20))
    assert compiled.lookups == pieces


LABELS = {
    "region": "eu",
    "items": "a label called items",
    "address": "<object at 0x7f00>",
    "app.kubernetes.io/part-of": "shop",
}
VALUES: dict[str, Any] = {
    "replicas": 3,
    "ratio": 0.5,
    "on": True,
    "none": None,
    "list": ["a", "b"],
    "nested": {"deep": {"er": "x"}, "n": 1},
    "big": 2**70,
    "text": "ü" * 40,
}

# (id, a lookup-only template, the same lookups written so that Jinja evaluates them)
SAME_AS_JINJA = [
    ("label", "${ cluster.labels.region }", "${ cluster.labels.region if true }"),
    ("key-named-like-a-method", "${ cluster.labels.items }", "${ cluster.labels.items if true }"),
    ("item", '${ ClusterLabels["app.kubernetes.io/part-of"] }',
     '${ ClusterLabels["app.kubernetes.io/part-of"] if true }'),
    ("number", "${ cluster.values.replicas }", "${ cluster.values.replicas if true }"),
    ("float", "${ cluster.values.ratio }", "${ cluster.values.ratio if true }"),
    ("bool", "${ cluster.values.on }", "${ cluster.values.on if true }"),
    ("null", "${ cluster.values.none }", "${ cluster.values.none if true }"),
    ("a-map", "${ cluster.values.nested }", "${ cluster.values.nested if true }"),
    ("a-whole-root", "${ cluster }", "${ cluster if true }"),
    ("deep", "${ ClusterValues.nested.deep.er }", "${ ClusterValues.nested.deep.er if true }"),
    ("over-64-bits", "${ cluster.values.big }", "${ cluster.values.big if true }"),
    ("in-text", "${ cluster.name }.${ cluster.labels.region }.example.com",
     "${ cluster.name if true }.${ cluster.labels.region if true }.example.com"),
    ("values-in-text",
     "n=${ cluster.values.replicas } ${ cluster.values.on } ${ cluster.values.list }",
     "n=${ cluster.values.replicas if true } ${ cluster.values.on if true }"
     " ${ cluster.values.list if true }"),
    ("big-in-text", "${ cluster.values.big }!", "${ cluster.values.big if true }!"),
    ("line-endings", "a\r\n${ cluster.name }\r\n", "a\r\n${ cluster.name if true }\r\n"),
    ("unicode-in-text", "[${ cluster.values.text }]", "[${ cluster.values.text if true }]"),
    ("an-address", "${ cluster.labels.address }", "${ cluster.labels.address if true }"),
    ("an-address-in-text", "x ${ cluster.labels.address }",
     "x ${ cluster.labels.address if true }"),
    ("missing-key", "${ cluster.labels.zone }", "${ cluster.labels.zone if true }"),
    ("missing-in-text", "a-${ cluster.labels.zone }", "a-${ cluster.labels.zone if true }"),
    ("missing-deeper", "${ cluster.values.nested.nope.x }",
     "${ cluster.values.nested.nope.x if true }"),
    ("through-a-list", "${ cluster.values.list[1] }", "${ cluster.values.list[1] if true }"),
    ("past-a-string", "${ cluster.name.upper }", "${ cluster.name.upper if true }"),
    ("a-map-method", "${ cluster.labels.keys }", "${ cluster.labels.keys if true }"),
]  # fmt: skip


def _outcome(template: str, limit: int) -> Any:
    ctx: TemplateContext = context(labels=LABELS, values=VALUES)
    try:
        return render_values({"v": template}, ctx, limit_bytes=limit, templates=TemplateCache())
    except TemplateError as error:
        return ("error", str(error), error.field)


@pytest.mark.parametrize("limit", [1 << 20, 60, 20], ids=["roomy", "tight", "tiny"])
@pytest.mark.parametrize(
    ("template", "through_jinja"),
    [c[1:] for c in SAME_AS_JINJA],
    ids=[c[0] for c in SAME_AS_JINJA],
)
def test_a_lookup_renders_or_fails_as_jinja_renders_it(
    template: str, through_jinja: str, limit: int
) -> None:
    assert _outcome(template, limit) == _outcome(through_jinja, limit)


@pytest.mark.parametrize(
    ("path", "found"),
    [
        (("cluster", "labels", "region"), "eu"),
        (("cluster", "labels", "nope"), MISSING),
        (("cluster", "values", "list", 0), MISSING),
        (("cluster", "name", "upper"), MISSING),
        (("images",), MISSING),
    ],
    ids=["found", "missing-key", "not-a-dict", "past-a-string", "no-such-name"],
)
def test_look_up_answers_only_keys_of_dicts(path: tuple[Any, ...], found: Any) -> None:
    variables = {"cluster": {"name": "a", "labels": {"region": "eu"}, "values": {"list": [1]}}}
    assert look_up(path, variables) is found
