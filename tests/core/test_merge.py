from __future__ import annotations

from typing import Any

import pytest

from bundler.core.merge import deep_merge, merge_helm

CASES = [
    ("scalar-replaces", {"a": 1}, {"a": 2}, {"a": 2}),
    ("maps-merge", {"a": {"x": 1, "y": 1}}, {"a": {"y": 2}}, {"a": {"x": 1, "y": 2}}),
    ("lists-replace", {"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
    ("map-replaces-scalar", {"a": 1}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ("scalar-replaces-map", {"a": {"b": 1}}, {"a": None}, {"a": None}),
    ("new-keys-added", {"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    (
        "deep",
        {"a": {"b": {"c": 1, "d": 1}}},
        {"a": {"b": {"c": 2}}},
        {"a": {"b": {"c": 2, "d": 1}}},
    ),
]


@pytest.mark.parametrize(
    ("base", "over", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_deep_merge(base: dict[str, Any], over: dict[str, Any], want: dict[str, Any]) -> None:
    assert deep_merge(base, over) == want


def test_inputs_are_not_aliased() -> None:
    base: dict[str, Any] = {"a": {"list": [1]}}
    merged = deep_merge(base, {})
    merged["a"]["list"].append(2)
    assert base == {"a": {"list": [1]}}


CM_A = {"kind": "ConfigMap", "name": "a"}
CM_B = {"kind": "ConfigMap", "name": "b"}
SECRET_A = {"kind": "Secret", "name": "a", "valuesKey": "v.yaml"}


@pytest.mark.parametrize(
    ("base", "over", "want"),
    [
        ([CM_A], [CM_B], [CM_A, CM_B]),
        ([CM_A, CM_B], [CM_B, SECRET_A], [CM_A, CM_B, SECRET_A]),
        (None, [CM_A], [CM_A]),
        ([CM_A], None, [CM_A]),
    ],
    ids=["appended", "duplicates-dropped", "target-only", "bundle-only"],
)
def test_target_values_from_entries_are_appended_to_the_bundles(
    base: list[dict[str, str]] | None,
    over: list[dict[str, str]] | None,
    want: list[dict[str, str]],
) -> None:
    def helm(values_from: list[dict[str, str]] | None) -> dict[str, Any]:
        return {"chart": "c"} if values_from is None else {"valuesFrom": values_from}

    assert merge_helm(helm(base), helm(over))["valuesFrom"] == want


def test_other_lists_still_replace_in_helm_options() -> None:
    merged = merge_helm({"values": {"l": [1, 2]}}, {"values": {"l": [3]}})
    assert merged["values"] == {"l": [3]}
