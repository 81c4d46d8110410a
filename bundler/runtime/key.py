"""The key of one object, `namespace/name`: what work queues hold and reconcilers receive."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True, slots=True)
class Key:
    """`namespace` is "" for cluster-scoped objects."""

    namespace: str
    name: str

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Key:
        meta = obj.get("metadata", {})
        return cls(meta.get("namespace") or "", meta["name"])

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name
