"""Label selectors evaluate, validate and print exactly as Kubernetes does."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.selector import LabelSelector
from bundler.core.selectors import (
    labels_match,
    selector_matches,
    selector_to_string,
    validate_selector,
)
from bundler.errors import InvalidInputError


def sel(**spec: Any) -> LabelSelector:
    return LabelSelector.model_validate(spec)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


MATCH_CASES = [
    ("empty-matches-labels", sel(), {"a": "b"}, True),
    ("empty-matches-no-labels", sel(), {}, True),
    ("labels-equal", sel(matchLabels={"env": "prod"}), {"env": "prod", "x": "y"}, True),
    ("labels-value-differs", sel(matchLabels={"env": "prod"}), {"env": "dev"}, False),
    ("labels-key-missing", sel(matchLabels={"env": "prod"}), {"region": "eu"}, False),
    ("labels-all-required", sel(matchLabels={"a": "1", "b": "2"}), {"a": "1"}, False),
    ("labels-case-sensitive", sel(matchLabels={"env": "Prod"}), {"env": "prod"}, False),
    ("labels-empty-value", sel(matchLabels={"a": ""}), {"a": ""}, True),
    ("labels-empty-value-missing", sel(matchLabels={"a": ""}), {}, False),
    ("in-listed", sel(matchExpressions=[expr("env", "In", "a", "b")]), {"env": "b"}, True),
    ("in-not-listed", sel(matchExpressions=[expr("env", "In", "a")]), {"env": "c"}, False),
    ("in-key-missing", sel(matchExpressions=[expr("env", "In", "a")]), {}, False),
    ("notin-key-missing", sel(matchExpressions=[expr("env", "NotIn", "a")]), {}, True),
    ("notin-listed", sel(matchExpressions=[expr("env", "NotIn", "a")]), {"env": "a"}, False),
    ("notin-other", sel(matchExpressions=[expr("env", "NotIn", "a")]), {"env": "b"}, True),
    ("exists-present", sel(matchExpressions=[expr("gpu", "Exists")]), {"gpu": "x"}, True),
    ("exists-empty-value", sel(matchExpressions=[expr("gpu", "Exists")]), {"gpu": ""}, True),
    ("exists-missing", sel(matchExpressions=[expr("gpu", "Exists")]), {"cpu": "x"}, False),
    ("doesnotexist-missing", sel(matchExpressions=[expr("gpu", "DoesNotExist")]), {}, True),
    (
        "doesnotexist-present",
        sel(matchExpressions=[expr("gpu", "DoesNotExist")]),
        {"gpu": ""},
        False,
    ),
    (
        "labels-and-expressions-hold",
        sel(matchLabels={"env": "prod"}, matchExpressions=[expr("region", "In", "eu", "us")]),
        {"env": "prod", "region": "eu"},
        True,
    ),
    (
        "labels-hold-expression-fails",
        sel(matchLabels={"env": "prod"}, matchExpressions=[expr("region", "In", "eu")]),
        {"env": "prod", "region": "ap"},
        False,
    ),
    (
        "all-expressions-required",
        sel(matchExpressions=[expr("a", "Exists"), expr("b", "DoesNotExist")]),
        {"a": "1", "b": "2"},
        False,
    ),
]


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [c[1:] for c in MATCH_CASES],
    ids=[c[0] for c in MATCH_CASES],
)
def test_selector_matches(selector: LabelSelector, labels: dict[str, str], expected: bool) -> None:
    assert selector_matches(selector, labels) is expected


LABELS_MATCH_CASES = [
    ("nothing-required", {}, {"a": "1"}, True),
    ("nothing-required-no-labels", {}, {}, True),
    ("subset", {"a": "1"}, {"a": "1", "b": "2"}, True),
    ("value-differs", {"a": "1"}, {"a": "2"}, False),
    ("key-missing", {"a": "1"}, {"b": "1"}, False),
    ("empty-value-required", {"a": ""}, {}, False),
]


@pytest.mark.parametrize(
    ("required", "labels", "expected"),
    [c[1:] for c in LABELS_MATCH_CASES],
    ids=[c[0] for c in LABELS_MATCH_CASES],
)
def test_labels_match(required: dict[str, str], labels: dict[str, str], expected: bool) -> None:
    assert labels_match(required, labels) is expected


STRING_CASES = [
    ("empty-is-everything", sel(), ""),
    ("one-label", sel(matchLabels={"a": "b"}), "a=b"),
    (
        "design-example",
        sel(
            matchLabels={"a": "b"},
            matchExpressions=[expr("c", "In", "y", "x"), expr("d", "DoesNotExist")],
        ),
        "a=b,c in (x,y),!d",
    ),
    ("notin", sel(matchExpressions=[expr("k", "NotIn", "b", "a")]), "k notin (a,b)"),
    ("exists", sel(matchExpressions=[expr("k", "Exists")]), "k"),
    ("values-deduplicated", sel(matchExpressions=[expr("k", "In", "x", "x")]), "k in (x)"),
    (
        "sorted-by-key-across-kinds",
        sel(matchLabels={"z": "1", "m": "2"}, matchExpressions=[expr("a", "Exists")]),
        "a,m=2,z=1",
    ),
    ("prefixed-key", sel(matchLabels={"example.com/role": "db"}), "example.com/role=db"),
]


@pytest.mark.parametrize(
    ("selector", "expected"), [c[1:] for c in STRING_CASES], ids=[c[0] for c in STRING_CASES]
)
def test_selector_to_string(selector: LabelSelector, expected: str) -> None:
    assert selector_to_string(selector) == expected


VALID_CASES = [
    ("empty", sel()),
    ("labels", sel(matchLabels={"env": "prod", "tier": "gold-1"})),
    ("prefixed-key", sel(matchLabels={"app.kubernetes.io/name": "podinfo"})),
    ("underscore-and-dots-in-name", sel(matchLabels={"a_b.c": "x_y.z"})),
    ("uppercase-name-and-value", sel(matchLabels={"Env": "Prod"})),
    ("empty-value", sel(matchLabels={"env": ""})),
    ("value-63", sel(matchLabels={"env": "v" * 63})),
    ("name-63", sel(matchLabels={"n" * 63: "x"})),
    ("prefix-253", sel(matchLabels={".".join(["p" * 63] * 3) + "." + "p" * 61 + "/n": "x"})),
    (
        "every-operator",
        sel(
            matchExpressions=[
                expr("a", "In", "x", ""),
                expr("b", "NotIn", "y"),
                expr("c", "Exists"),
                expr("d", "DoesNotExist"),
            ]
        ),
    ),
]


@pytest.mark.parametrize("selector", [c[1] for c in VALID_CASES], ids=[c[0] for c in VALID_CASES])
def test_validate_selector_accepts(selector: LabelSelector) -> None:
    validate_selector(selector, field="spec.selector")


FIELD = "spec.targets[0].clusterSelector"
INVALID_CASES = [
    (
        "in-without-values",
        sel(matchExpressions=[expr("a", "In")]),
        ".matchExpressions[0].values",
        "must be specified when operator is In",
    ),
    (
        "notin-without-values",
        sel(matchExpressions=[expr("a", "NotIn")]),
        ".matchExpressions[0].values",
        "must be specified when operator is NotIn",
    ),
    (
        "exists-with-values",
        sel(matchExpressions=[expr("a", "Exists", "x")]),
        ".matchExpressions[0].values",
        "may not be specified when operator is Exists",
    ),
    (
        "doesnotexist-with-values",
        sel(matchExpressions=[expr("a", "DoesNotExist", "x")]),
        ".matchExpressions[0].values",
        "may not be specified when operator is DoesNotExist",
    ),
    (
        "second-expression-indexed",
        sel(matchExpressions=[expr("a", "Exists"), expr("b", "In")]),
        ".matchExpressions[1].values",
        "must be specified",
    ),
    (
        "expression-key-charset",
        sel(matchExpressions=[expr("a b", "Exists")]),
        ".matchExpressions[0].key",
        "'a b'",
    ),
    (
        "expression-key-empty",
        sel(matchExpressions=[expr("", "Exists")]),
        ".matchExpressions[0].key",
        "must not be empty",
    ),
    (
        "expression-value-charset",
        sel(matchExpressions=[expr("a", "In", "ok", "not ok")]),
        ".matchExpressions[0].values[1]",
        "'not ok'",
    ),
    (
        "expression-value-too-long",
        sel(matchExpressions=[expr("a", "In", "v" * 64)]),
        ".matchExpressions[0].values[0]",
        "at most 63",
    ),
    ("key-name-too-long", sel(matchLabels={"n" * 64: "x"}), ".matchLabels", "at most 63"),
    (
        "key-name-starts-with-dash",
        sel(matchLabels={"-a": "x"}),
        ".matchLabels",
        "starting and ending",
    ),
    ("key-name-ends-with-dot", sel(matchLabels={"a.": "x"}), ".matchLabels", "starting and ending"),
    ("key-empty-prefix", sel(matchLabels={"/a": "x"}), ".matchLabels", "prefix ''"),
    ("key-empty-name", sel(matchLabels={"example.com/": "x"}), ".matchLabels", "must not be empty"),
    (
        "key-uppercase-prefix",
        sel(matchLabels={"Example.com/a": "x"}),
        ".matchLabels",
        "DNS-1123 subdomain",
    ),
    (
        "key-prefix-too-long",
        sel(matchLabels={"p" * 254 + "/a": "x"}),
        ".matchLabels",
        "DNS-1123 subdomain",
    ),
    ("key-two-slashes", sel(matchLabels={"a/b/c": "x"}), ".matchLabels", "at most one '/'"),
    ("value-too-long", sel(matchLabels={"env": "v" * 64}), ".matchLabels", "at most 63"),
    ("value-space", sel(matchLabels={"env": "a b"}), ".matchLabels", "value of label 'env'"),
    (
        "value-ends-with-dash",
        sel(matchLabels={"env": "prod-"}),
        ".matchLabels",
        "must be empty or consist of",
    ),
]


@pytest.mark.parametrize(
    ("selector", "path", "cause"),
    [c[1:] for c in INVALID_CASES],
    ids=[c[0] for c in INVALID_CASES],
)
def test_validate_selector_rejects(selector: LabelSelector, path: str, cause: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        validate_selector(selector, field=FIELD)
    assert info.value.field == FIELD + path
    assert cause in info.value.message
    assert str(info.value).startswith(FIELD + path + ": ")


def test_validate_selector_error_names_the_design_path() -> None:
    selector = sel(matchExpressions=[expr("a", "Exists"), expr("b", "NotIn")])
    with pytest.raises(InvalidInputError, match=r"matchExpressions\[1\]\.values: must be"):
        validate_selector(selector, field="spec.targets[0].clusterSelector")
