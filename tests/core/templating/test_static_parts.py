"""Template-free parts taken whole: the same tree, limits and errors, and nothing shared."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bundler.core.templating import TemplateContext
from bundler.core.templating.budget import MAX_NESTING
from bundler.core.templating.render import render_fields
from bundler.core.templating.static_parts import StaticParts, shared_static_parts
from bundler.core.templating.templater import IN_PROCESS, RenderCall
from bundler.errors import TemplateError

CONTEXT = TemplateContext(
    cluster_name="edge-1",
    cluster_namespace="fleet-default",
    cluster_labels={"region": "eu"},
    cluster_annotations={},
    cluster_values={"replicas": 3},
    bundle_name="app",
    bundle_namespace="fleet-default",
)


def _nested(depth: int) -> Any:
    node: Any = "leaf"
    for _ in range(depth):
        node = {"a": node}
    return node


CHART = {
    "image": {"repository": "ghcr.io/app", "tag": "1.2.3", "pullPolicy": "IfNotPresent"},
    "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": 0.1}},
    "ports": [80, 443, {"name": "metrics", "port": 9090, "enabled": True, "extra": None}],
    "huge": 2**80,
}
TREES = [
    {"values": CHART},
    {"values": {**CHART, "region": "${ cluster.labels.region }"}},
    {"values": {**CHART, "${ cluster.name }": {"static": ["x", 1]}}},
    {"values": {"list": [CHART, "${ cluster.values.replicas }", [1, [2, [3]]]]}},
    {"values": {"literal": "$${ kept }", "plain": CHART}},
    {"values": {"tuple": ("a", "b"), "ints": {1: "one"}, "plain": CHART}},
    {"values": {"deep": _nested(MAX_NESTING + 5), "x": "${ cluster.name }"}},
    {"values": {"edge": _nested(MAX_NESTING - 3), "x": "${ cluster.name }"}},
    {"values": {"key-clash": {"edge-1": 1, "${ cluster.name }": 2}}},
    {
        "values": {
            "a": {"b": "${ cluster.name }", "c": CHART, "d": 1},
            "s": "static",
            "l": ["x", "${ cluster.labels.region }", {"e": "${ cluster.values.replicas }"}],
        }
    },
    {"values": {"x": CHART, "y": "${ cluster.labels.nope }", "z": "big" * 30}},
    {"values": {"x": "${ cluster.name }", "deep": _nested(MAX_NESTING - 3)}},
]
TREE_IDS = [
    "all-static", "one-template", "templated-key", "lists", "escaped", "odd-types",
    "too-deep", "near-limit", "key-clash", "mixed-nested", "undefined-between", "mixed-deep",
]  # fmt: skip


def _outcome(tree: dict[str, Any], statics: StaticParts | None, limit: int) -> Any:
    try:
        return render_fields(tree, CONTEXT, statics=statics, limit_bytes=limit)
    except TemplateError as error:
        return ("error", str(error), error.field)


@pytest.mark.parametrize("limit", [1 << 20, 120, 40], ids=["roomy", "tight", "tiny"])
@pytest.mark.parametrize("tree", TREES, ids=TREE_IDS)
def test_a_render_with_static_parts_is_the_render_without(tree: dict[str, Any], limit: int) -> None:
    statics = StaticParts(tree)
    assert _outcome(tree, statics, limit) == _outcome(tree, None, limit)


@pytest.mark.parametrize("tree", TREES[-3:], ids=TREE_IDS[-3:])
def test_at_every_limit_a_render_fails_where_the_walk_fails(tree: dict[str, Any]) -> None:
    statics = StaticParts(tree)
    assert statics.mixed_count
    full = len(json.dumps(tree)) + 200
    for limit in range(0, full, 7):
        assert _outcome(tree, statics, limit) == _outcome(tree, None, limit), limit


@pytest.mark.parametrize(
    ("tree", "mixed"),
    [
        ({"values": CHART}, 0),
        ({"values": {**CHART, "region": "${ x }"}}, 2),
        ({"values": {"a": ["${ x }", {"b": "${ y }"}]}}, 4),
        ({"values": {"${ k }": {"b": "${ y }"}}}, 2),
        ({"values": {"m": {1: "${ x }"}}}, 2),
    ],
    ids=["all-static", "a-template-and-its-parents", "nested", "templated-key", "odd-key"],
)
def test_containers_holding_templates_are_planned_unless_a_key_is_templated(
    tree: dict[str, Any], mixed: int
) -> None:
    assert StaticParts(tree).mixed_count == mixed


@pytest.mark.parametrize(
    ("tree", "parts"),
    [
        ({"values": CHART}, 1),
        ({"values": {**CHART, "region": "${ x }"}}, 3),
        ({"values": {"a": ["${ x }", {"b": 1}, [2]]}}, 2),
        ({"values": {"${ k }": {"b": 1}}}, 1),
        ({"values": {"t": ("a",), "m": {1: "x"}}}, 0),
        ({"values": {"deep": _nested(MAX_NESTING + 5)}}, 0),
    ],
    ids=[
        "whole-tree",
        "siblings-of-a-template",
        "in-lists",
        "under-a-templated-key",
        "not-json-shapes",
        "past-the-nesting-limit",
    ],
)
def test_the_largest_template_free_containers_are_kept(tree: dict[str, Any], parts: int) -> None:
    assert len(StaticParts(tree)) == parts


def test_a_rendered_part_shares_nothing_with_the_tree_or_other_renders() -> None:
    tree = {"values": {"image": {"tags": ["a"]}, "name": "${ cluster.name }"}}
    statics = StaticParts(tree)
    first = render_fields(tree, CONTEXT, statics=statics)
    first["values"]["image"]["tags"].append("b")
    second = render_fields(tree, CONTEXT, statics=statics)
    assert second["values"]["image"] == {"tags": ["a"]} == tree["values"]["image"]


def test_only_trees_that_several_calls_share_are_measured() -> None:
    shared, alone = {"values": CHART}, {"values": {"x": CHART}}
    found = shared_static_parts([shared, alone, shared])
    assert list(found) == [id(shared)]


def test_the_in_process_templater_answers_the_same_with_a_shared_tree() -> None:
    tree = {"values": {**CHART, "region": "${ cluster.labels.region }"}}
    answers = IN_PROCESS.render([RenderCall(tree, CONTEXT), RenderCall(tree, CONTEXT)])
    assert answers == [render_fields(tree, CONTEXT)] * 2
