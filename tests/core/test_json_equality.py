"""Two decoded JSON values are the same document when an API server would store them alike."""

from __future__ import annotations

import enum
import json
from types import MappingProxyType
from typing import Any

import pytest

from bundler.core.json_equality import json_equal


class Mode(enum.StrEnum):
    FAST = "fast"


SHARED = {"a": [1]}

CASES: list[tuple[str, Any, Any, bool]] = [
    ("same-object", SHARED, SHARED, True),
    ("equal-strings", "x", "x", True),
    ("different-strings", "x", "y", False),
    ("key-order", {"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
    ("true-is-not-one", True, 1, False),
    ("one-is-not-true", 1, True, False),
    ("false-is-not-zero", {"on": False}, {"on": 0}, False),
    ("int-equals-float-by-value", 1, 1.0, True),
    ("different-numbers", 1, 2.5, False),
    ("list-equals-tuple", [1, "a"], (1, "a"), True),
    ("list-order-matters", [1, 2], [2, 1], False),
    ("longer-list", [1], [1, 1], False),
    ("missing-key", {"a": 1}, {"b": 1}, False),
    ("null-is-not-missing", {"a": None}, {"b": None}, False),
    ("null-equals-null", {"a": None}, {"a": None}, True),
    ("extra-key", {"a": 1}, {"a": 1, "b": 2}, False),
    ("nested-difference", {"a": {"b": [{"c": True}]}}, {"a": {"b": [{"c": 1}]}}, False),
    ("nested-equal", {"a": {"b": [{"c": 1.0}]}}, {"a": {"b": [{"c": 1}]}}, True),
    ("any-mapping", MappingProxyType({"a": [1]}), {"a": [1]}, True),
    ("string-enum-by-value", Mode.FAST, "fast", True),
    ("number-is-not-string", 1, "1", False),
    ("empty-map-is-not-empty-list", {}, [], False),
    ("empty-list-is-not-empty-map", [], {}, False),
    ("scalar-is-not-list", "a", ["a"], False),
    ("null-is-not-empty-map", None, {}, False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(a, b, want) for _, a, b, want in CASES],
    ids=[case for case, *_ in CASES],
)
def test_json_equal(a: Any, b: Any, expected: bool) -> None:
    assert json_equal(a, b) is expected
    assert json_equal(b, a) is expected


@pytest.mark.parametrize(
    ("a", "b"),
    [(a, b) for case, a, b, _ in CASES if case != "same-object" and "enum" not in case],
    ids=[case for case, *_ in CASES if case != "same-object" and "enum" not in case],
)
def test_json_equal_agrees_with_a_json_round_trip(a: Any, b: Any) -> None:
    """What the API server would store: both sides encoded and decoded (numbers by value)."""
    assert json_equal(a, b) is _stored_alike(a, b)


def _stored_alike(a: Any, b: Any) -> bool:
    def stored(value: Any) -> Any:
        return json.loads(json.dumps(_plain(value), sort_keys=True), parse_float=_whole)

    return json.dumps(stored(a), sort_keys=True) == json.dumps(stored(b), sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, MappingProxyType):
        return dict(value)
    return value


def _whole(text: str) -> float | int:
    number = float(text)
    return int(number) if number.is_integer() else number
