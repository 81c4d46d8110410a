"""Tests of the caps that keep every filter and method linear, proven by budgets, not clocks."""

from __future__ import annotations

import pytest

from tests.core.templating.test_render import render_error, render_one

CAPPED = [
    ("trim-many-chars", "${ ('a' * 1000) | trim('b' * 300 ~ 'a') }", "over the limit of 256"),
    ("strip-many-chars", "${ ('a' * 1000).strip('b' * 300) }", "over the limit of 256"),
    ("lstrip-many-chars", "${ 'a'.lstrip(chars='b' * 300) }", "over the limit of 256"),
    ("sum-of-lists", "${ [[1], [2]] | sum(start=[]) }", "its start must be a number"),
    ("tojson-wide-indent", "${ [[[1]]] | tojson(indent=10**6) }", "over the limit of"),
    ("to-bytes-length", "${ (1).to_bytes(10**9, 'big') }", "over the limit of"),
    ("from-bytes-digits", "${ (0).from_bytes(('x' * 4000).encode(), 'big') }", "digits"),
    ("center-through-map", "${ ['a'] | map('center', 10**9) | list }", "over the limit of"),
]


@pytest.mark.parametrize(
    ("template", "expected"), [c[1:] for c in CAPPED], ids=[c[0] for c in CAPPED]
)
def test_superlinear_inputs_are_refused_before_they_run(template: str, expected: str) -> None:
    message = render_error({"v": template})
    assert expected in message
    assert "values.v" in message


def test_strip_within_the_cap_works() -> None:
    assert render_one("${ 'xxabcxx' | trim('x') }") == "abc"
    assert render_one("${ [1, 2.5] | sum(start=1) }") == 4.5


#: Each runs the named filter on ~100 KiB per call, in a loop that would take minutes.
WORST_FILTERS = [
    ("wordwrap", "s | wordwrap(1)"),
    ("wordwrap-words", "(s | replace('aa', 'a ')) | wordwrap(2)"),
    ("title", "(s | replace('aa', 'a ')) | title"),
    ("striptags", "(s | replace('aaa', '<a>')) | striptags"),
    ("urlencode", "s | urlencode"),
    ("sort", "(s | list) | sort"),
    ("map", "(s | list) | map('upper') | list"),
    ("dictsort", "{}.fromkeys(range(100000)) | dictsort"),
]


@pytest.mark.parametrize("call", [c[1] for c in WORST_FILTERS], ids=[c[0] for c in WORST_FILTERS])
def test_worst_filters_run_out_of_steps(call: str) -> None:
    template = (
        "${% set s = 'a' * 100000 %}"
        f"${{% for i in range(100000) %}}${{% set r = {call} %}}${{% endfor %}}"
    )
    assert "steps" in render_error({"v": template})


LONG_INTEGERS = [
    ("floor-division", "${% set r = a // 7 %}"),
    ("modulo", "${% set r = a % 7 %}"),
    ("subtraction", "${% set r = a - 1 %}"),
    ("printing", "${% set r = a | string %}"),
    ("printing-in-a-list", "${% set r = [a] | tojson %}"),
]


@pytest.mark.parametrize("body", [c[1] for c in LONG_INTEGERS], ids=[c[0] for c in LONG_INTEGERS])
def test_work_on_long_integers_is_charged_by_its_square(body: str) -> None:
    template = f"${{% set a = 10 ** 4000 %}}${{% for i in range(100000) %}}{body}${{% endfor %}}"
    assert "steps" in render_error({"v": template})
