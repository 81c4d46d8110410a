"""Values in messages print as Go prints them: %q strings, %v numbers, encoding/json objects."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.apiserver.go_values import go_json, go_quote, go_value


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (10, "10"),
        (10.0, "10"),
        (1.5, "1.5"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1e-5, "1e-05"),
        (-0.25, "-0.25"),
        (True, "true"),
    ],
    ids=[
        "int",
        "whole-float",
        "fraction",
        "million",
        "below-exponent",
        "small",
        "negative",
        "bool",
    ],
)
def test_go_value(value: bool | int | float, printed: str) -> None:
    assert go_value(value) == printed


@pytest.mark.parametrize(
    ("text", "quoted"),
    [('a"b', '"a\\"b"'), ("tab\there", '"tab\\there"'), ("\x01", '"\\x01"'), ("é", '"é"')],
    ids=["quote", "tab", "control", "printable-unicode"],
)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ({"b": 1, "a": [2.0, None]}, '{"a":[2,null],"b":1}'),
        ("<a&b>", '"\\u003ca\\u0026b\\u003e"'),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (0.5, "0.5"),
    ],
    ids=["sorted-keys-whole-floats", "html-escapes", "large-float", "small-float", "fraction"],
)
def test_go_json(value: Any, encoded: str) -> None:
    assert go_json(value) == encoded
