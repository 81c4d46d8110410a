"""Tests of what the sandbox offers: the audited builtins, text conversion, chains of keys."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bundler.core.templating.environment import ENVIRONMENT, REFUSED_FILTERS
from tests.support.core.templating.rendering import context, render_error, render_one

#: Every filter a template can name, each checked for linear time or a capped input (see the
#: guards' docstring). A Jinja upgrade that adds one fails here until it is audited.
AUDITED_FILTERS = {
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e",
    "escape", "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent",
    "int", "items", "join", "last", "length", "list", "lower", "map", "max", "min", "reject",
    "rejectattr", "replace", "reverse", "round", "safe", "select", "selectattr", "slice", "sort",
    "string", "striptags", "sum", "title", "to_objects", "tojson", "trim", "truncate", "unique",
    "upper", "urlencode", "wordcount", "wordwrap", "xmlattr",
}  # fmt: skip
AUDITED_TESTS = {
    "!=", "<", "<=", "==", ">", ">=", "boolean", "callable", "defined", "divisibleby", "eq",
    "equalto", "escaped", "even", "false", "filter", "float", "ge", "greaterthan", "gt", "in",
    "integer", "iterable", "le", "lessthan", "lower", "lt", "mapping", "ne", "none", "number",
    "odd", "sameas", "sequence", "string", "test", "true", "undefined", "upper",
}  # fmt: skip
AUDITED_GLOBALS = {"cycler", "dict", "joiner", "namespace", "range"}


def test_every_reachable_filter_test_and_global_is_audited() -> None:
    filters = {name for name in ENVIRONMENT.filters if " " not in name}  # guards have a space
    assert filters == AUDITED_FILTERS
    assert set(ENVIRONMENT.tests) == AUDITED_TESTS
    assert set(ENVIRONMENT.globals) == AUDITED_GLOBALS


REFUSED = [
    ("urlize", "${ 'www.example.com' | urlize }", "quadratic"),
    ("urlize-through-map", "${ ['x'] | map('urlize') | list }", "quadratic"),
    ("pprint", "${ cluster.labels | pprint }", "tojson"),
    ("random", "${ [1, 2] | random }", "redeploy"),
    ("guard-through-map", "${ ['x'] | map('bundler concat') | list }", "no filter named"),
]


@pytest.mark.parametrize(("template", "why"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_filters_say_why(template: str, why: str) -> None:
    message = render_error({"v": template})
    assert why in message
    assert "values.v" in message
    assert set(REFUSED_FILTERS) == {"urlize", "pprint", "random"}


TEXT = [
    ("bool-string", "${ (cluster.labels.env == 'prod') | string }", "true"),
    ("false-string", "${ false | string }", "false"),
    ("none-string", "${ none | string }", "null"),
    ("list-string", "${ [true, none, 1] | string }", "[true, null, 1]"),
    ("map-string", "${ {'a': false} | string }", '{"a": false}'),
    ("number-string", "${ 3 | string }", "3"),
    ("join-writes-yaml-scalars", "${ [1, true, none] | join(',') }", "1,true,null"),
    ("join-attribute", "${ [{'a': true}] | join(attribute='a') }", "true"),
    ("upper-of-bool", "${ true | upper }", "TRUE"),
    ("replace-in-bool", "${ false | replace('f', 'F') }", "False"),
    ("mixed-text-unchanged", "on=${ true }", "on=true"),
]


@pytest.mark.parametrize(("template", "expected"), [c[1:] for c in TEXT], ids=[c[0] for c in TEXT])
def test_converting_to_text_spells_bool_and_null_as_yaml(template: str, expected: str) -> None:
    assert render_one(template) == expected


CHAINS = [
    ("missing-parent", "${ cluster.values.ingress.className | default('nginx') }", "nginx"),
    ("missing-grandparent", "${ cluster.values.a.b.c.d | default(1) }", 1),
    ("subscripts", "${ cluster.values['ingress']['className'] | default('nginx') }", "nginx"),
    ("present", "${ cluster.values.ingress.className | default('nginx') }", "traefik"),
    ("is-defined", "${ cluster.values.x.y is defined }", False),
]


@pytest.mark.parametrize(
    ("template", "expected"), [c[1:] for c in CHAINS], ids=[c[0] for c in CHAINS]
)
def test_default_applies_to_the_whole_chain(template: str, expected: Any) -> None:
    values: dict[str, Any] = {"tier": "gold"}
    if "present" in template or expected == "traefik":
        values["ingress"] = {"className": "traefik"}
    assert render_one(template, context(values=values)) == expected


def test_missing_chain_names_the_first_missing_key_and_a_working_hint() -> None:
    message = render_error({"v": "${ cluster.values.ingress.className }"})
    assert "no key 'ingress'" in message
    assert "cluster.values.ingress.className | default(" in message


OBJECT_TEXTS = [
    ("joiner-string", "${ joiner() | string }"),
    ("cycler-percent", "${ '%s' % cycler(1) }"),
    ("cycler-percent-in-text", "x-${ '%s' % cycler(1) }"),
    ("method-format", "${ '{}'.format(cluster.name.upper) }"),
    ("joiner-join", "${ [joiner()] | join }"),
    ("joiner-upper", "${ joiner() | upper }"),
    ("repr-in-a-list", "${ ['%s' % joiner()] }"),
    ("repr-in-a-key", None),
]


@pytest.mark.parametrize("template", [c[1] for c in OBJECT_TEXTS], ids=[c[0] for c in OBJECT_TEXTS])
def test_python_objects_never_reach_the_values(template: str | None) -> None:
    values = {"${ '%s' % joiner() }": 1} if template is None else {"v": template}
    message = render_error(values)
    assert "Bundle fleet-default/podinfo for Cluster fleet-default/prod-eu-1" in message
    assert not re.search("0x[0-9a-f]{4}", message)  # the message is the same on every render
    assert "not a string" in message or "printed form of a Python object" in message


SURROGATES = [
    ("expression", {"v": "${ '\\ud800' }"}, "\\ud800"),
    ("mixed-text", {"v": "a${ '\\udfff' }"}, "\\udfff"),
    ("key", {"${ '\\ud800' }": 1}, "\\ud800"),
]


@pytest.mark.parametrize(
    ("values", "code"), [c[1:] for c in SURROGATES], ids=[c[0] for c in SURROGATES]
)
def test_lone_surrogates_are_refused(values: dict[str, Any], code: str) -> None:
    assert f"holds {code}, half of a character" in render_error(values)
