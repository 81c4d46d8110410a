"""Tests of the linear wordwrap: it wraps as Jinja's textwrap-based filter does."""

from __future__ import annotations

import pytest
from jinja2 import Environment

from bundler.core.templating.wordwrap import wordwrap

JINJA = Environment()

CASES = [
    ("prose", "the quick brown fox jumps over the lazy dog", 10, True, True),
    ("long-word", "a" * 50, 7, True, True),
    ("long-word-kept", "see " + "a" * 50 + " end", 7, False, True),
    ("long-word-fills-the-line", "ab " + "c" * 20, 10, True, True),
    ("hyphenated", "self-contained e-mail-address well-known", 9, True, True),
    ("hyphens-off", "self-contained e-mail-address", 9, True, False),
    ("long-hyphenated", "supercalifragilistic-expialidocious", 25, True, True),
    ("spaces-at-breaks", "a    b    c", 2, True, True),
    ("long-space-run", "co-op" + " " * 9 + "x", 3, True, False),
    ("leading-space", "   indented text here", 8, True, True),
    ("lines", "first line\n\nthird line is long", 6, True, True),
    ("width-one", "abc de", 1, True, True),
    ("tabs-kept", "a\tb\tc d", 4, True, True),
    ("empty", "", 5, True, True),
]


@pytest.mark.parametrize(
    ("text", "width", "break_long", "hyphens"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_wraps_as_jinja_does(text: str, width: int, break_long: bool, hyphens: bool) -> None:
    expected = JINJA.filters["wordwrap"](JINJA, text, width, break_long, None, hyphens)
    assert wordwrap(text, width, break_long, None, hyphens) == expected


def test_wrapstring_joins_the_lines() -> None:
    assert wordwrap("aa bb cc", 2, wrapstring="|") == "aa|bb|cc"


@pytest.mark.parametrize("width", [0, -1, 1.5], ids=["zero", "negative", "float"])
def test_width_must_be_a_positive_integer(width: int) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        wordwrap("text", width)
