"""Tests of rendering values per cluster: types, delimiters, context, errors, sandbox, limits."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bundler.core.templating import TemplateContext, render_values
from bundler.errors import TemplateError
from tests.support.core.templating.rendering import (
    compile_steps,
    context,
    render_error,
    render_error_traced,
    render_one,
)

RENDERS = [
    # a whole expression keeps its native type
    ("int", "${ cluster.values.replicas + 2 }", 5),
    ("bool", "${ cluster.labels.env == 'prod' }", True),
    ("none", "${ none }", None),
    ("float", "${ 1.5 }", 1.5),
    ("list", "${ [cluster.name, 1] }", ["prod-eu-1", 1]),
    ("map", "${ {'region': cluster.labels.region} }", {"region": "eu"}),
    ("whitespace-inside", "${cluster.values.replicas}", 3),
    ("lazy-result-becomes-list", "${ ['a', 'b'] | map('upper') }", ["A", "B"]),
    ("tuple-becomes-list", "${ (1, 2) }", [1, 2]),
    # anything else stays a string
    ("mixed-text", "replicas-${ cluster.values.replicas }", "replicas-3"),
    ("two-expressions", "${ cluster.name }${ cluster.values.replicas }", "prod-eu-13"),
    ("outer-whitespace", " ${ cluster.values.replicas }", " 3"),
    ("trailing-newline-kept", "${ cluster.name }\n", "prod-eu-1\n"),
    ("json-scalars-in-text", "${ true }/${ none }/${ 2 }", "true/null/2"),
    ("json-containers-in-text", "x=${ {'a': [1, 'b']} }", 'x={"a": [1, "b"]}'),
    ("concat", "${ 'n-' ~ 1 ~ true }", "n-1true"),
    # Helm's and Jinja's own syntax pass through
    ("helm-braces", "{{ .Values.image.tag }}", "{{ .Values.image.tag }}"),
    ("jinja-block", "{% if x %}y{% endif %}", "{% if x %}y{% endif %}"),
    ("jinja-comment", "{# note #}", "{# note #}"),
    ("helm-next-to-ours", "{{ .Release.Name }}-${ cluster.name }", "{{ .Release.Name }}-prod-eu-1"),
    ("plain-text", "just text: with colon", "just text: with colon"),
    ("lone-dollar", "costs $5 {x}", "costs $5 {x}"),
    # $${ writes a literal ${
    ("literal-opener", "$${HOME}/bin", "${HOME}/bin"),
    ("literal-opener-alone", "$${", "${"),
    ("literal-next-to-expression", "$${A}-${ cluster.name }", "${A}-prod-eu-1"),
    ("literal-statement-opener", "$${% raw %}", "${% raw %}"),
    # statements and comments
    (
        "if-statement",
        "${% if cluster.labels.env == 'prod' %}big${% else %}small${% endif %}",
        "big",
    ),
    (
        "for-statement",
        "${% for k, v in cluster.labels | dictsort %}${ k }=${ v };${% endfor %}",
        "env=prod;region=eu;",
    ),
    ("set-statement", "${% set n = cluster.values.replicas * 2 %}n=${ n }", "n=6"),
    ("comment", "${# why #}x", "x"),
    ("inline-if-without-else", "a${ 'b' if false }c", "ac"),
    # the default filter and other filters
    ("default-filter", "${ cluster.labels.tier | default('bronze') }", "bronze"),
    ("default-filter-present", "${ cluster.labels.env | default('dev') }", "prod"),
    ("default-top-level-name", "${ nothing | default(7) }", 7),
    ("tojson", "${ cluster.labels | tojson }", '{"env": "prod", "region": "eu"}'),
    ("join", "${ [1, 2, 3] | join(',') }", "1,2,3"),
    ("range", "${ range(3) | list }", [0, 1, 2]),
    ("str-method", "${ cluster.name.upper() }", "PROD-EU-1"),
    ("percent-format", "${ '%03d' % 7 }", "007"),
    ("str-format", "${ '{}-{}'.format(cluster.name, 1) }", "prod-eu-1-1"),
    ("is-defined", "${ cluster.labels.tier is defined }", False),
    # the whole context, in both spellings
    ("cluster-namespace", "${ cluster.namespace }", "fleet-default"),
    ("annotations", "${ cluster.annotations.owner }", "team-a"),
    ("bundle", "${ bundle.namespace }/${ bundle.name }", "fleet-default/podinfo"),
    ("capi-cluster", "${ cluster.values.Cluster.spec.topology.version }", "v1.30.0"),
    ("fleet-cluster-name", "${ ClusterName }", "prod-eu-1"),
    ("fleet-cluster-namespace", "${ ClusterNamespace }", "fleet-default"),
    ("fleet-cluster-labels", "${ ClusterLabels.region }", "eu"),
    ("fleet-cluster-annotations", "${ ClusterAnnotations.owner }", "team-a"),
    ("fleet-cluster-values", "${ ClusterValues.tier }", "gold"),
]


@pytest.mark.parametrize(
    ("template", "expected"), [c[1:] for c in RENDERS], ids=[c[0] for c in RENDERS]
)
def test_renders(template: str, expected: Any) -> None:
    assert render_one(template) == expected


LABEL_INJECTIONS = [
    ("colon-space", "a: b"),
    ("newline", "x\ny: z"),
    ("yaml-flow-map", "{a: 1}"),
    ("yaml-list", "- item"),
    ("python-literal", "[1, 2]"),
    ("template-syntax", "${ cluster.name }"),
]


@pytest.mark.parametrize(
    "label", [c[1] for c in LABEL_INJECTIONS], ids=[c[0] for c in LABEL_INJECTIONS]
)
@pytest.mark.parametrize("template", ["${ cluster.labels.note }", "note=${ cluster.labels.note }"])
def test_labels_cannot_inject_structure(label: str, template: str) -> None:
    rendered = render_one(template, context(labels={"note": label}))
    assert rendered == template.replace("${ cluster.labels.note }", label)


KEYS_WIN = [
    ("label-items", "${ cluster.labels.items }", "label-items"),
    ("label-keys", "${ ClusterLabels.keys }", "label-keys"),
    ("label-values", "${ cluster.labels.values }", "label-values"),
    ("label-get-subscript", "${ cluster.labels['get'] }", "label-get"),
    ("value-key-values", "${ cluster.values.values }", "value-values"),
    ("value-key-update", "${ cluster.values.update }", "value-update"),
    ("nested-key-items", "${ cluster.values.nested.items }", 1),
    ("methods-still-there", "${ cluster.annotations.items() | list }", [["owner", "team-a"]]),
]


@pytest.mark.parametrize(
    ("template", "expected"), [c[1:] for c in KEYS_WIN], ids=[c[0] for c in KEYS_WIN]
)
def test_keys_win_over_attributes(template: str, expected: Any) -> None:
    ctx = context(
        labels={
            "items": "label-items",
            "keys": "label-keys",
            "values": "label-values",
            "get": "label-get",
        },
        values={"values": "value-values", "update": "value-update", "nested": {"items": 1}},
    )
    assert render_one(template, ctx) == expected


def test_keys_are_rendered_as_strings() -> None:
    values: dict[Any, Any] = {
        "${ cluster.name }-host": "${ cluster.labels.region }",
        "${ cluster.values.replicas }": "three",
        "plain": {"nested-${ cluster.labels.env }": True},
        7: "non-string keys stay",
    }
    assert render_values(values, context()) == {
        "prod-eu-1-host": "eu",
        "3": "three",
        "plain": {"nested-prod": True},
        7: "non-string keys stay",
    }


def test_every_string_in_the_tree_is_rendered() -> None:
    values = {
        "ingress": {"hosts": ["${ cluster.name }.example.com", "static.example.com"]},
        "replicas": "${ cluster.values.replicas }",
        "enabled": True,
        "limits": {"cpu": 1.5, "memory": None},
    }
    assert render_values(values, context()) == {
        "ingress": {"hosts": ["prod-eu-1.example.com", "static.example.com"]},
        "replicas": 3,
        "enabled": True,
        "limits": {"cpu": 1.5, "memory": None},
    }


MISSING_NAMES = [
    ("missing-label", {"region": "${ cluster.labels.zone }"}, "values.region", "'zone'"),
    ("missing-top-level", {"a": ["${ zone }"]}, "values.a[0]", "'zone'"),
    (
        "missing-deep",
        {"ingress": {"hosts": ["x", "${ cluster.values.dns.zone }"]}},
        "values.ingress.hosts[1]",
        "'dns'",
    ),
    (
        "quoted-path",
        {"app.kubernetes.io/name": "${ nope }"},
        'values["app.kubernetes.io/name"]',
        "'nope'",
    ),
    ("in-a-key", {"hosts": {"${ cluster.labels.zone }": 1}}, "values.hosts (map key", "'zone'"),
    ("in-mixed-text", {"h": "x-${ cluster.labels.zone }-y"}, "values.h", "'zone'"),
    ("in-statement", {"h": "${% if cluster.labels.zone %}y${% endif %}"}, "values.h", "'zone'"),
    ("through-a-filter", {"h": "${ cluster.labels.zone | upper }"}, "values.h", "'zone'"),
    ("as-a-call-argument", {"h": "${ 'a'.replace(zone, 'b') }"}, "values.h", "'zone'"),
]


@pytest.mark.parametrize(
    ("values", "path", "name"), [c[1:] for c in MISSING_NAMES], ids=[c[0] for c in MISSING_NAMES]
)
def test_missing_name_names_everything(values: dict[str, Any], path: str, name: str) -> None:
    message = render_error(values)
    assert "Bundle fleet-default/podinfo" in message
    assert "Cluster fleet-default/prod-eu-1" in message
    assert path in message
    assert name in message
    assert "$${" in message
    assert "disableTemplating: true in spec.helm (or spec.kustomize)" in message


def test_template_error_carries_object_and_field() -> None:
    with pytest.raises(TemplateError) as raised:
        render_values({"ingress": {"hosts": ["${ nope }"]}}, context())
    assert raised.value.obj == "Bundle fleet-default/podinfo for Cluster fleet-default/prod-eu-1"
    assert raised.value.field == "values.ingress.hosts[0]"


def test_missing_key_lists_the_keys_that_exist() -> None:
    message = render_error({"v": "${ cluster.labels.zone }"})
    assert "no key 'zone'" in message
    assert "env, region" in message


INVALID = [
    ("unclosed-expression", "${ cluster.name", "invalid template"),
    ("bad-expression", "${ 1 + }", "invalid template"),
    ("unclosed-block", "${% if true %}x", "invalid template"),
    ("unknown-filter", "${ 1 | nosuchfilter }", "no filter named 'nosuchfilter'"),
    ("macro", "${% macro m() %}x${% endmacro %}", "macro %} is not supported"),
    ("block-set", "${% set x %}y${% endset %}", "is not supported"),
    ("include", "${% include 'x' %}", "include %} is not supported"),
    ("recursive-loop", "${% for x in [1] recursive %}${% endfor %}", "recursive loops"),
    ("not-a-value", "${ cycler }", "not a string, number, bool, null, list or map"),
    ("division-by-zero", "${ 1 / 0 }", "ZeroDivisionError"),
    ("no-lipsum", "${ lipsum(100000) }", "'lipsum' is undefined"),
    ("duplicate-key", None, "which this map already has"),
]


@pytest.mark.parametrize(
    ("template", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_templates_fail_with_the_path(template: str | None, expected: str) -> None:
    values = {"a": {"${ 'b' }": 1, "b": 2}} if template is None else {"a": {"b": [template]}}
    message = render_error(values)
    assert expected in message
    assert "values.a" in message


SANDBOX = [
    ("dunder-class", "${ ''.__class__ }"),
    ("dunder-chain", "${ ''.__class__.__mro__[1].__subclasses__() }"),
    ("dunder-globals", "${ range.__globals__ }"),
    ("subscript-dunder", "${ cluster['__class__'] }"),
    ("attr-filter-dunder", "${ cluster | attr('__class__') }"),
    ("format-dunder", "${ '{0.__class__}'.format(cluster) }"),
    ("mutate-labels", "${ cluster.labels.update({'env': 'dev'}) }"),
    ("mutate-list", "${ cluster.values.list.append(4) }"),
    ("private-attribute", "${ namespace()._Namespace__attrs }"),
]


@pytest.mark.parametrize("template", [c[1] for c in SANDBOX], ids=[c[0] for c in SANDBOX])
def test_sandbox_blocks_escapes_and_mutation(template: str) -> None:
    ctx = context(values={"list": [1, 2, 3]})
    before = copy.deepcopy(ctx)
    message = render_error({"v": template}, ctx)
    assert "not allowed in the template sandbox" in message
    assert ctx == before


LIMITS = [
    ("string-repeat", "${ 'x' * 100000000 }"),
    ("list-repeat", "${ [1] * 10**9 }"),
    ("repeat-in-text", "a${ 'x' * 100000000 }"),
    ("huge-power", "${ 10 ** 1000000 }"),
    ("huge-product", "${ (10 ** 4000) * (10 ** 4000) }"),
    ("huge-range", "${ range(10**9) | list }"),
    ("concat", "${ ('x' * 600000) ~ ('y' * 600000) }"),
    ("plus-strings", "${ ('x' * 600000) + ('y' * 600000) }"),
    ("plus-lists", "${% set l = ['x' * 1000] * 600 %}${ l + l }"),
    (
        "doubling-concat",
        "${% set ns = namespace(s='x') %}"
        "${% for i in range(40) %}${% set ns.s = ns.s ~ ns.s %}${% endfor %}",
    ),
    ("percent-width", "${ '%999999999d' % 1 }"),
    ("percent-star-width", "${ '%*d' % (999999999, 1) }"),
    ("format-width", "${ '{:>999999999}'.format(1) }"),
    ("format-repeat", "${ ('{0}' * 1000).format('x' * 100000) }"),
    ("ljust", "${ 'x'.ljust(999999999) }"),
    ("replace-empty", "${ ('a' * 100000).replace('', 'b' * 100000) }"),
    ("join-separator", "${ ('x' * 100000).join(['a'] * 1000) }"),
    ("center-filter", "${ 'x' | center(999999999) }"),
    ("indent-filter", "${ ('\\n' * 100000) | indent(1000) }"),
    ("replace-filter", "${ ('a' * 100000) | replace('', 'b' * 100000) }"),
    ("join-filter", "${ (['a'] * 1000) | join('x' * 100000) }"),
    ("format-filter", "${ '%999999999s' | format('x') }"),
    ("batch-fill", "${ [1] | batch(999999999, 'x') | list }"),
    ("nested-literals", "${% set a = [1, 1] %}" + "${% set a = [a, a] %}" * 40 + "${ a | length }"),
    ("output-loop", "${% for i in range(100000) %}" + "x" * 100 + "${% endfor %}"),
]


#: Far below what any of LIMITS would allocate if it ran: proof that the check came first.
ALLOCATION_CEILING = 32 << 20


@pytest.mark.parametrize("template", [c[1] for c in LIMITS], ids=[c[0] for c in LIMITS])
def test_limits_fail_fast_without_allocating(template: str) -> None:
    message, peak = render_error_traced({"v": template})
    assert "limit" in message
    assert "values.v" in message
    assert peak < ALLOCATION_CEILING


STEP_BOMBS = [
    (
        "nested-loops",
        "${% for i in range(100000) %}${% for j in range(100000) %}${% endfor %}${% endfor %}",
    ),
    (
        "membership-in-loop",
        "${% set l = range(50000) | list %}${% for i in range(1000) %}${ i in l }${% endfor %}",
    ),
    (
        "sort-in-loop",
        "${% set l = range(50000) | list %}"
        "${% for i in range(1000) %}${% set s = l | sort %}${% endfor %}",
    ),
    ("select-in-big", "${% set l = range(50000) | list %}${ l | select('in', l) | list }"),
]


@pytest.mark.parametrize("template", [c[1] for c in STEP_BOMBS], ids=[c[0] for c in STEP_BOMBS])
def test_work_is_capped_in_steps(template: str) -> None:
    assert "steps" in render_error({"v": template})


def test_step_limit_is_a_parameter() -> None:
    template = "${% for i in range(50) %}x${% endfor %}"
    compiling = compile_steps(template)
    # the range() call, and each iteration's body: its Output node and its text
    assert render_one(template, step_limit=compiling + 1 + 50 * 2) == "x" * 50
    limit = compiling + 10
    assert f"limit of {limit} steps" in render_error({"v": template}, step_limit=limit)


def test_rendered_tree_is_capped() -> None:
    values = {f"k{i}": "${ 'x' * 1000 }" for i in range(20)}
    assert len(render_values(values, context(), limit_bytes=100_000)) == 20
    message = render_error(values, limit_bytes=10_000)
    assert "exceed the limit of 10000 bytes" in message


def test_plain_values_count_towards_the_cap() -> None:
    message = render_error({"big": "x" * 20_000}, limit_bytes=10_000)
    assert "values.big" in message
    assert "limit of 10000 bytes" in message


NESTING = [
    ("deep-values-tree", None),
    ("deep-parentheses", "${ " + "(" * 2000 + "1" + ")" * 2000 + " }"),
    (
        "deep-built-value",
        "${% set ns = namespace(a=[]) %}${% for i in range(500) %}${% set ns.a = [ns.a] %}"
        "${% endfor %}${ ns.a }",
    ),
]


@pytest.mark.parametrize("template", [c[1] for c in NESTING], ids=[c[0] for c in NESTING])
def test_pathological_nesting_fails_cleanly(template: str | None) -> None:
    values: dict[str, Any] = {"v": template}
    if template is None:
        for _ in range(500):
            values = {"v": values}
    assert "nest" in render_error(values)


def test_one_cluster_failing_does_not_affect_another() -> None:
    values = {"zone": "${ cluster.labels.zone }", "name": "${ cluster.name }"}
    without_zone = context(name="a", labels={})
    with_zone = context(name="b", labels={"zone": "z1"})
    with pytest.raises(TemplateError, match="Cluster fleet-default/a"):
        render_values(values, without_zone)
    assert render_values(values, with_zone) == {"zone": "z1", "name": "b"}
    with pytest.raises(TemplateError, match="Cluster fleet-default/a"):
        render_values(values, without_zone)


def test_a_limit_hit_does_not_leak_into_the_next_render() -> None:
    greedy = {"v": "${% for i in range(100) %}x${% endfor %}"}
    compiling = compile_steps(greedy["v"])
    render_error(greedy, step_limit=compiling + 50)
    assert render_values(greedy, context(), step_limit=compiling + 300) == {"v": "x" * 100}


def test_same_values_render_per_cluster() -> None:
    values = {"host": "${ cluster.name }.${ cluster.labels.region }"}
    rendered = [render_values(values, context(name=f"c{i}"))["host"] for i in range(5)]
    assert rendered == [f"c{i}.eu" for i in range(5)]


def test_input_is_not_mutated_and_output_does_not_alias_it() -> None:
    values = {
        "list": [1, {"a": "${ cluster.name }"}],
        "map": {"b": [2]},
        "whole": "${ cluster.values }",
        "labels": "${ cluster.labels }",
    }
    ctx = context()
    values_before, ctx_before = copy.deepcopy(values), copy.deepcopy(ctx)
    rendered = render_values(values, ctx)
    assert values == values_before
    rendered["list"].append(3)
    rendered["map"]["b"].append(3)
    rendered["whole"]["Cluster"]["metadata"]["name"] = "changed"
    rendered["labels"]["env"] = "changed"
    assert values == values_before
    assert ctx == ctx_before


TO_OBJECTS = [
    (
        "cidrs",
        "${ cidrs | to_objects('cidr') }",
        [{"cidr": "10.0.0.0/16"}, {"cidr": "10.1.0.0/16"}],
    ),
    (
        "with-fields",
        "${ cidrs[:1] | to_objects('cidr', nat='Enabled', size=26) }",
        [{"cidr": "10.0.0.0/16", "nat": "Enabled", "size": 26}],
    ),
    ("empty", "${ [] | to_objects('cidr') }", []),
]


@pytest.mark.parametrize(
    ("template", "want"), [c[1:] for c in TO_OBJECTS], ids=[c[0] for c in TO_OBJECTS]
)
def test_to_objects_builds_a_list_of_maps(template: str, want: list[dict[str, Any]]) -> None:
    ctx = TemplateContext("c", "ws", {}, {}, {"cidrs": ["10.0.0.0/16", "10.1.0.0/16"]}, "b", "ws")
    rendered = render_values({"pools": template.replace("cidrs", "cluster.values.cidrs")}, ctx)
    assert rendered == {"pools": want}


def test_to_objects_output_is_capped_before_it_is_built() -> None:
    ctx = TemplateContext("c", "ws", {}, {}, {}, "b", "ws")
    with pytest.raises(TemplateError, match="limit"):
        render_values({"x": "${ range(100000) | to_objects('k', pad='x' * 1000) }"}, ctx)


#: Integers beyond 64 bits are refused as values, as the values files refuse them.
LONG_INTEGER_VALUES = [
    ("power", "${ 2 ** 64 }"),
    ("negative", "${ -(2 ** 63) - 1 }"),
    ("in-a-list", "${ [1, 2 ** 100] }"),
    ("in-a-map", "${ {'a': 2 ** 70} }"),
    ("through-a-filter", "${ [2 ** 64] | list }"),
]


@pytest.mark.parametrize(
    "template", [c[1] for c in LONG_INTEGER_VALUES], ids=[c[0] for c in LONG_INTEGER_VALUES]
)
def test_integers_beyond_64_bits_are_refused_as_values(template: str) -> None:
    assert "does not fit in 64 bits" in render_error({"v": template})


SIXTY_FOUR_BITS = [
    ("largest", "${ 2 ** 63 - 1 }", 2**63 - 1),
    ("smallest", "${ -(2 ** 63) }", -(2**63)),
    ("long-one-as-text", "n=${ 2 ** 64 }", "n=18446744073709551616"),
    ("long-one-as-string", "${ (2 ** 64) | string }", "18446744073709551616"),
    ("long-key-as-text", "${ {2 ** 64: 1} }", {"18446744073709551616": 1}),
]


@pytest.mark.parametrize(
    ("template", "expected"), [c[1:] for c in SIXTY_FOUR_BITS], ids=[c[0] for c in SIXTY_FOUR_BITS]
)
def test_64_bit_integers_and_long_ones_as_text_render(template: str, expected: Any) -> None:
    assert render_one(template) == expected
