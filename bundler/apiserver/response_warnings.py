"""The warnings of one response, written as kube-apiserver's warning recorder writes them.

Each warning is a `Warning: 299 - "<text>"` header (`"` and `\\` escaped), on the answer whatever
its status. A text is sent once; one with control characters is dropped. Past 4096 characters of
warnings in all, every warning is cut to 256 characters, and those past 4096 more are left out.
"""

from __future__ import annotations

import unicodedata

# kube-apiserver's warning recorder limits (k8s.io/apiserver/pkg/endpoints/filters/warning.go).
TRUNCATE_AT_TOTAL = 4 * 1024
TRUNCATE_ITEM = 256
_CODE_AGENT = "299 -"


class Warnings:
    """Collects one request's warnings; `headers()` gives the Warning header values."""

    def __init__(self) -> None:
        self._texts: list[str] = []

    def add(self, text: str) -> None:
        if text and text not in self._texts and not _has_control(text):
            self._texts.append(text)

    def headers(self) -> list[str]:
        kept: list[str] = []
        written, truncating = 0, False
        for index, text in enumerate(self._texts):
            if truncating and written >= TRUNCATE_AT_TOTAL:
                break
            if truncating:
                text = text[:TRUNCATE_ITEM]
            if written + len(text) <= TRUNCATE_AT_TOTAL or truncating:
                written += len(text)
                kept.append(text)
                continue
            truncating = True
            kept = [t[:TRUNCATE_ITEM] for t in self._texts[: index + 1]]
            written = sum(map(len, kept))
        return [f'{_CODE_AGENT} "{_escaped(text)}"' for text in kept]


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _has_control(text: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in text)
