"""bundler.core.bounds: text others wrote, cut to a byte budget on a UTF-8 boundary, visibly."""

from __future__ import annotations

import pytest

from bundler.core.bounds import TRUNCATED_MARKER, truncated

LIMIT = 64
ROOM = LIMIT - len(TRUNCATED_MARKER.encode())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("short", "short"),
        ("x" * LIMIT, "x" * LIMIT),
        ("é" * (LIMIT // 2), "é" * (LIMIT // 2)),
        ("x" * (LIMIT + 1), "x" * ROOM + TRUNCATED_MARKER),
        ("é" * LIMIT, "é" * (ROOM // 2) + TRUNCATED_MARKER),
        ("x" + "é" * LIMIT, "x" + "é" * ((ROOM - 1) // 2) + TRUNCATED_MARKER),
        ("x" + "😀" * LIMIT, "x" + "😀" * ((ROOM - 1) // 4) + TRUNCATED_MARKER),
        ("\ud800" * LIMIT, "\ud800" * (ROOM // 3) + TRUNCATED_MARKER),
    ],
    ids=[
        "empty",
        "short-kept",
        "ascii-at-the-limit-kept",
        "two-byte-characters-at-the-limit-kept",
        "ascii-one-over-cut",
        "two-byte-characters-cut-whole",
        "cut-never-splits-a-character",
        "four-byte-characters-cut-whole",
        "lone-surrogates-cut-whole",
    ],
)
def test_truncated(text: str, expected: str) -> None:
    assert truncated(text, LIMIT) == expected


@pytest.mark.parametrize(
    "text",
    ["x" * 10 * LIMIT, "é" * 10 * LIMIT, "a😀" * 10 * LIMIT],
    ids=["ascii", "two-byte", "mixed"],
)
def test_truncated_fits_and_is_stable(text: str) -> None:
    once = truncated(text, LIMIT)
    assert len(once.encode("utf-8", "surrogatepass")) <= LIMIT
    assert once.endswith(TRUNCATED_MARKER)
    assert truncated(once, LIMIT) == once


def test_a_limit_below_the_marker_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="marker"):
        truncated("x" * 100, len(TRUNCATED_MARKER.encode()) - 1)
