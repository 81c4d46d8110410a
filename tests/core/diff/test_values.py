from __future__ import annotations

from typing import Any

import pytest

from bundler.core.diff.values import ChangeKind, compact, diff_values, path_text


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"a": 1}, {"a": 1}, []),
        ({"a": 1}, {"a": 2}, ["a: 1 -> 2"]),
        ({}, {"a": {"b": True}}, ['a: + {"b": true}']),
        ({"a": {"b": [1, 2]}}, {"a": {}}, ["a.b: - [1, 2]"]),
        (
            {"l": [{"x": 1}, {"x": 2}]},
            {"l": [{"x": 1}, {"x": 3}, 4]},
            ["l[1].x: 2 -> 3", "l[2]: + 4"],
        ),
        ({"l": [1, 2]}, {"l": [1]}, ["l[1]: - 2"]),
        ({"a": {"b": 1}}, {"a": [1]}, ['a: {"b": 1} -> [1]']),
        ({"n": 1}, {"n": 1.0}, ["n: 1 -> 1.0"]),
        ({"n": 1}, {"n": True}, ["n: 1 -> true"]),
        ({"dotted.key": "a"}, {"dotted.key": "b"}, ['["dotted.key"]: "a" -> "b"']),
    ],
    ids=[
        "equal",
        "scalar-changed",
        "key-added",
        "nested-key-removed",
        "list-items-by-index",
        "list-item-removed",
        "type-change-is-one-change",
        "int-and-float-differ",
        "int-and-bool-differ",
        "odd-keys-quoted",
    ],
)
def test_values_differ_by_path(old: Any, new: Any, expected: list[str]) -> None:
    assert [change.describe() for change in diff_values(old, new)] == expected


def test_changes_come_in_sorted_key_order_with_their_kind() -> None:
    changes = diff_values({"b": 1, "c": 1}, {"a": 1, "b": 2})
    assert [(c.path_text, c.kind) for c in changes] == [
        ("a", ChangeKind.ADDED),
        ("b", ChangeKind.CHANGED),
        ("c", ChangeKind.REMOVED),
    ]


@pytest.mark.parametrize(
    ("path", "text"),
    [((), "(root)"), (("a", 0, "b"), "a[0].b"), ((0,), "[0]"), (("a b",), '["a b"]')],
    ids=["root", "mixed", "index-first", "space-quoted"],
)
def test_paths_read_like_the_values_file(path: tuple[str | int, ...], text: str) -> None:
    assert path_text(path) == text


def test_long_values_are_cut_to_one_short_line() -> None:
    shown = compact({"k": "x" * 200}, limit=20)
    assert len(shown) == 20 and shown.endswith("...")


def test_json_data_omits_the_side_that_does_not_exist() -> None:
    added, removed = diff_values({"r": 1}, {"a": 2})
    assert added.to_data() == {"path": "a", "change": "added", "new": 2}
    assert removed.to_data() == {"path": "r", "change": "removed", "old": 1}
