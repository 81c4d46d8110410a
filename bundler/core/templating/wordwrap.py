"""Wrapping text in time linear in its length, for the ``wordwrap`` filter.

Jinja's ``wordwrap`` uses :mod:`textwrap`, which copies the rest of a long word once per line it
breaks off, so wrapping one long word at a small width takes time quadratic in its length. This
is the same greedy wrapping, keeping the offset into the word instead of copying it: each line is
filled with whole words while they fit; a word longer than the width fills the rest of the line
and continues on the next (after its last hyphen that fits, with ``break_on_hyphens``); spaces
where a line breaks are dropped. As textwrap does, only ASCII whitespace separates words, tabs
are not expanded, and the lines of the input are wrapped one by one.
"""

from __future__ import annotations

import re

_WHITESPACE = "\t\n\x0b\x0c\r "
_CHUNK = re.compile(f"[{_WHITESPACE}]+|[^{_WHITESPACE}]+")
# after a hyphen that follows two letters and precedes a letter: `long-word` -> `long-`, `word`
_HYPHEN_BREAK = re.compile(r"(?<=[^\d\W]{2}-)(?=[^\d\W])")


def wordwrap(
    text: str,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    """``text`` wrapped to ``width`` columns, lines joined with ``wrapstring`` (a newline)."""
    if not isinstance(width, int) or width < 1:
        raise ValueError(f"wordwrap: the width must be a positive integer, got {width!r}")
    separator = "\n" if wrapstring is None else wrapstring
    return separator.join(
        separator.join(_wrap_line(line, width, break_long_words, break_on_hyphens))
        for line in text.splitlines()
    )


def _chunks(line: str, break_on_hyphens: bool) -> list[str]:
    chunks = _CHUNK.findall(line)
    if not break_on_hyphens:
        return chunks
    return [part for chunk in chunks for part in _HYPHEN_BREAK.split(chunk)]


def _wrap_line(line: str, width: int, break_long_words: bool, break_on_hyphens: bool) -> list[str]:
    chunks = _chunks(line, break_on_hyphens)
    lines: list[str] = []
    index, start = 0, 0  # the text still to place is chunks[index][start:], then the rest
    while index < len(chunks):
        if lines and chunks[index].isspace():
            index, start = index + 1, 0  # spaces where a line breaks are dropped
            continue
        parts: list[str] = []
        used = 0
        while index < len(chunks) and used + len(chunks[index]) - start <= width:
            parts.append(chunks[index][start:])
            used += len(chunks[index]) - start
            index, start = index + 1, 0
        if index < len(chunks) and len(chunks[index]) - start > width:
            if break_long_words:
                end = _break_point(chunks[index], start, start + width - used, break_on_hyphens)
                parts.append(chunks[index][start:end])
                start = end
            elif not parts:
                parts.append(chunks[index][start:])
                index, start = index + 1, 0
        if parts and not parts[-1].strip():
            parts.pop()
        if parts:
            lines.append("".join(parts))
    return lines


def _break_point(word: str, start: int, end: int, break_on_hyphens: bool) -> int:
    """Where to break ``word[start:]`` to fit before ``end``: after its last hyphen there."""
    if break_on_hyphens:
        hyphen = word.rfind("-", start, end)
        if hyphen > start and word[start:hyphen].strip("-"):
            return hyphen + 1
    return end
