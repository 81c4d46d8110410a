"""The difference between two sets of rendered Kubernetes objects (one release, two versions).

Objects are matched by kind, namespace and name (the API group too: a `Deployment` of another
group is another object); each is added, removed or changed. A changed object carries the paths
that changed and a unified diff of the two objects' YAML (keys sorted), so a reviewer sees the
changed fields in their context.

A Secret's values are never shown: `redact_secrets` replaces each value of its `data` and
`stringData` by a fingerprint (the caller's keyed hash), so a diff says which keys changed and
nothing of what they hold.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from bundler.core.diff.values import ChangeKind, ValueChange, diff_values

Obj = Mapping[str, Any]
DIFF_CONTEXT_LINES = 3


@dataclass(frozen=True, order=True)
class ObjectKey:
    """An object's identity in a release: `group/kind namespace/name`."""

    group: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Obj) -> ObjectKey:
        api_version = str(obj.get("apiVersion", ""))
        group = api_version.rpartition("/")[0]
        metadata = obj.get("metadata")
        meta = metadata if isinstance(metadata, Mapping) else {}
        return cls(
            group,
            str(obj.get("kind", "")),
            str(meta.get("namespace") or ""),
            str(meta.get("name") or ""),
        )

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{kind} {where}"


@dataclass(frozen=True)
class ObjectChange:
    """One object added, removed or changed; `fields` and `diff` only for a change."""

    key: ObjectKey
    kind: ChangeKind
    fields: tuple[ValueChange, ...] = ()
    diff: str = field(default="", repr=False)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "object": str(self.key),
            "kind": self.key.kind,
            "namespace": self.key.namespace,
            "name": self.key.name,
            "change": self.kind.value,
        }
        if self.kind is ChangeKind.CHANGED:
            data["fields"] = [change.to_data() for change in self.fields]
            data["diff"] = self.diff
        return data


def diff_manifests(old: Iterable[Obj], new: Iterable[Obj]) -> list[ObjectChange]:
    """The objects added, removed and changed from `old` to `new`, ordered by key; an object
    appearing twice in one set (a chart bug) counts by its last occurrence, as Kubernetes would
    end up with it."""
    before = {ObjectKey.of(obj): obj for obj in old}
    after = {ObjectKey.of(obj): obj for obj in new}
    changes: list[ObjectChange] = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            changes.append(ObjectChange(key, ChangeKind.REMOVED))
        elif key not in before:
            changes.append(ObjectChange(key, ChangeKind.ADDED))
        else:
            fields = diff_values(before[key], after[key])
            if fields:
                text = unified_diff(before[key], after[key], str(key))
                changes.append(ObjectChange(key, ChangeKind.CHANGED, tuple(fields), text))
    return changes


def unified_diff(old: Obj, new: Obj, name: str) -> str:
    """A unified diff of the YAML of `old` and `new` (sorted keys), labelled with `name`."""
    lines = difflib.unified_diff(
        _yaml_lines(old),
        _yaml_lines(new),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
        n=DIFF_CONTEXT_LINES,
    )
    return "".join(line if line.endswith("\n") else f"{line}\n" for line in lines)


def _yaml_lines(obj: Obj) -> list[str]:
    text = yaml.safe_dump(_plain(obj), sort_keys=True, allow_unicode=True, width=100)
    return text.splitlines(keepends=True)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


SECRET_VALUE_FIELDS = ("data", "stringData")


def redact_secrets(objects: Iterable[Obj], fingerprint: Callable[[str], str]) -> list[Obj]:
    """`objects` with the values of every Secret's `data` and `stringData` replaced by
    `(redacted <fingerprint>)`: equal values stay equal, a changed value shows as changed."""
    return [_redacted(obj, fingerprint) if _is_secret(obj) else obj for obj in objects]


def _is_secret(obj: Obj) -> bool:
    return obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def _redacted(secret: Obj, fingerprint: Callable[[str], str]) -> Obj:
    out = dict(secret)
    for name in SECRET_VALUE_FIELDS:
        values = secret.get(name)
        if isinstance(values, Mapping):
            out[name] = {str(k): f"(redacted {fingerprint(str(v))})" for k, v in values.items()}
        elif values is not None:
            out[name] = f"(redacted {fingerprint(str(values))})"
    return out
