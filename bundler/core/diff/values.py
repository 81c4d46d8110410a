"""A structural diff of two JSON-like trees, by path: what was added, removed or changed where.

Maps are compared key by key and lists item by item (an item beyond the shorter list is added or
removed), so a change deep in a values tree reads as one line naming its path, e.g.
`ingress.hosts[0].host: "a.example" -> "b.example"`, never as a text diff of the whole tree. A
value that changes type (a map becoming a list) is one change of the whole value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

PathPart = str | int


class ChangeKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True)
class ValueChange:
    """One difference at `path`; `old` is absent (None) when added, `new` when removed."""

    path: tuple[PathPart, ...]
    kind: ChangeKind
    old: Any = None
    new: Any = None

    @property
    def path_text(self) -> str:
        return path_text(self.path)

    def describe(self) -> str:
        """`path: old -> new`, `path: + new` or `path: - old`, values as compact JSON."""
        if self.kind is ChangeKind.ADDED:
            return f"{self.path_text}: + {compact(self.new)}"
        if self.kind is ChangeKind.REMOVED:
            return f"{self.path_text}: - {compact(self.old)}"
        return f"{self.path_text}: {compact(self.old)} -> {compact(self.new)}"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path_text, "change": self.kind.value}
        if self.kind is not ChangeKind.ADDED:
            data["old"] = self.old
        if self.kind is not ChangeKind.REMOVED:
            data["new"] = self.new
        return data


def diff_values(old: Any, new: Any, path: tuple[PathPart, ...] = ()) -> list[ValueChange]:
    """Every difference between `old` and `new`, in path order (maps by sorted key)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        changes: list[ValueChange] = []
        for k in sorted(set(old) | set(new), key=str):
            if k not in new:
                changes.append(ValueChange((*path, k), ChangeKind.REMOVED, old=old[k]))
            elif k not in old:
                changes.append(ValueChange((*path, k), ChangeKind.ADDED, new=new[k]))
            else:
                changes.extend(diff_values(old[k], new[k], (*path, k)))
        return changes
    if _is_list(old) and _is_list(new):
        changes = []
        for i in range(max(len(old), len(new))):
            if i >= len(new):
                changes.append(ValueChange((*path, i), ChangeKind.REMOVED, old=old[i]))
            elif i >= len(old):
                changes.append(ValueChange((*path, i), ChangeKind.ADDED, new=new[i]))
            else:
                changes.extend(diff_values(old[i], new[i], (*path, i)))
        return changes
    if old == new and type(old) is type(new):
        return []
    return [ValueChange(path, ChangeKind.CHANGED, old=old, new=new)]


def path_text(path: Sequence[PathPart]) -> str:
    """`a.b[0]["dotted.key"]`: keys joined by dots, indexes in brackets, odd keys quoted."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text or "(root)"


def compact(value: Any, limit: int = 80) -> str:
    """`value` as one line of JSON, cut at `limit` characters."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)
