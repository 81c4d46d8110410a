"""What an import reports: where a Fleet input is written, and the notes naming FILE:LINE."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass(frozen=True)
class Located:
    """A parsed YAML document and where it is written: `at(path)` is `SOURCE:LINE` of a field
    path (`helm.values.a`, `targetCustomizations[0]`), else of its closest written parent; line
    0 is something without lines (a directory), named alone."""

    source: str
    body: Any
    line: int = 1
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def at(self, path: str | None) -> str:
        while path:
            if path in self.lines:
                return f"{self.source}:{self.lines[path]}"
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return f"{self.source}:{self.line}" if self.line else self.source


class NoteKind(StrEnum):
    # dropped: something of the Fleet input that the output does not do (the import exits 1)
    NOT_CONVERTED = "not converted"
    # converted, with a difference in meaning or something to do on the clusters
    NOTE = "note"


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    where: str
    field: str
    message: str

    def __str__(self) -> str:
        parts = [self.where, self.field] if self.field else [self.where]
        return f"{self.kind.value}: {': '.join(parts)}: {self.message}"


@dataclass
class Notes:
    """The notes of one import, in the order they were found."""

    items: list[Note] = field(default_factory=list)

    def dropped(self, located: Located, path: str, message: str) -> None:
        self.items.append(Note(NoteKind.NOT_CONVERTED, located.at(path), path, message))

    def note(self, located: Located, path: str, message: str) -> None:
        self.items.append(Note(NoteKind.NOTE, located.at(path), path, message))
