"""JSON merge patch per RFC 7386, including the RFC's own examples."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest

from bundler.store.mergepatch import json_copy, merge_patch, merged_sharing

CASES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]
IDS = [
    "replace-value",
    "add-key",
    "null-removes",
    "null-removes-one-of-two",
    "list-replaced-by-string",
    "string-replaced-by-list",
    "nested-merge-and-remove",
    "lists-replace-wholesale",
    "list-target-list-patch",
    "non-object-patch-replaces",
    "null-patch",
    "string-patch",
    "null-in-target-kept",
    "object-patch-on-list-target",
    "nested-null-on-missing-path",
]


@pytest.mark.parametrize(("target", "patch", "expected"), CASES, ids=IDS)
def test_merge_patch_follows_rfc7386(target: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(target, patch) == expected


def test_merge_patch_does_not_mutate_inputs() -> None:
    target = {"a": {"b": [1, 2]}, "c": 1}
    patch = {"a": {"b": [3], "d": {"e": 1}}, "c": None}
    result = merge_patch(target, patch)
    result["a"]["d"]["e"] = 2
    assert target == {"a": {"b": [1, 2]}, "c": 1}
    assert patch == {"a": {"b": [3], "d": {"e": 1}}, "c": None}


def test_json_copy_is_deep() -> None:
    original = {"a": [{"b": 1}], "c": ("x",)}
    copied = json_copy(original)
    copied["a"][0]["b"] = 2
    assert original["a"] == [{"b": 1}]
    assert copied["c"] == ["x"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": [1, 2.5, True, None, "s"]}, {"a": [1, 2.5, True, None, "s"]}),
        (MappingProxyType({"a": ({"b": 1},)}), {"a": [{"b": 1}]}),
        (OrderedDict(a=[[1], [2]]), {"a": [[1], [2]]}),
        ("text", "text"),
    ],
    ids=["plain-json", "read-only-mapping-and-tuple", "dict-subclass", "scalar"],
)
def test_json_copy_gives_plain_dicts_and_lists_equal_to_the_value(
    value: object, expected: object
) -> None:
    copied = json_copy(value)
    assert copied == expected
    assert type(copied) is type(expected)
    if isinstance(copied, dict):
        assert type(copied["a"]) is list


def test_merged_sharing_shares_what_the_patch_leaves_alone() -> None:
    target: dict[str, Any] = {"a": {"x": 1}, "b": {"y": [1]}, "c": 1}
    patch = {"b": {"z": 2}, "c": None, "d": [3]}
    merged = merged_sharing(target, patch)
    assert (
        merged == merge_patch(target, patch) == {"a": {"x": 1}, "b": {"y": [1], "z": 2}, "d": [3]}
    )
    assert merged["a"] is target["a"] and merged["b"]["y"] is target["b"]["y"]
    assert target == {"a": {"x": 1}, "b": {"y": [1]}, "c": 1}
