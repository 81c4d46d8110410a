"""Server-side printing: answers in meta.k8s.io/v1 Table form, as kube-apiserver gives kubectl.

kubectl asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...` on get, list and
watch. A Table has `columnDefinitions` (name, type, format, description, priority) and `rows`,
each with `cells` in column order and `object`: the object's metadata as a PartialObjectMetadata
(`includeObject=Metadata`, the default), the whole object (`Object`) or nothing (`None`).

Columns are Name, then for the bundler kinds the CRDs' additionalPrinterColumns (which end with
Age; bundler.api.crdgen), for every other kind Age. Cells follow the column type, as the CRD
table convertor does: missing values are null, dates print as an age ("5m", "3h2m", "12d").
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from bundler.api.crdgen import CRDS
from bundler.api.resources import Resource
from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj

TABLE_API_VERSION = "meta.k8s.io/v1"
_NAME_COLUMN: Obj = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace.",
    "priority": 0,
}
_AGE_DESCRIPTION = "CreationTimestamp is the server time when this object was created."


class IncludeObject(StrEnum):
    """What each row carries besides its cells (the `includeObject` query parameter)."""

    NONE = "None"
    METADATA = "Metadata"
    OBJECT = "Object"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    json_path: str
    description: str

    def definition(self) -> Obj:
        return {
            "name": self.name,
            "type": self.type,
            "format": "",
            "description": self.description,
            "priority": 0,
        }


_AGE = Column("Age", "date", ".metadata.creationTimestamp", _AGE_DESCRIPTION)
_CRD_COLUMNS: dict[Resource, tuple[Column, ...]] = {
    spec.resource: (
        *(
            Column(
                c.name,
                c.type,
                c.json_path,
                f"Custom resource definition column (in JSONPath format): {c.json_path}",
            )
            for c in spec.columns
        ),
        _AGE,
    )
    for spec in CRDS
}


def wants_table(accept: str) -> bool:
    """True when the Accept header asks for a meta.k8s.io Table (kubectl get does)."""
    for media in accept.split(","):
        params = {p.strip() for p in media.split(";")[1:]}
        if "as=Table" in params and "g=meta.k8s.io" in params:
            return True
    return False


@dataclass(frozen=True)
class TableView:
    """How one request's objects are printed: the kind's columns and what each row carries."""

    resource: Resource
    include: IncludeObject

    @property
    def columns(self) -> tuple[Column, ...]:
        return _CRD_COLUMNS.get(self.resource, (_AGE,))

    def of_answer(self, answer: Obj, now: datetime) -> Obj:
        """The Table for a get (one object) or list (`items`) answer."""
        if "items" in answer:
            return self._table(answer["items"], dict(answer.get("metadata") or {}), now)
        version = answer.get("metadata", {}).get("resourceVersion")
        return self._table([answer], {} if version is None else {"resourceVersion": version}, now)

    def of_event(self, obj: Obj, now: datetime, *, headers: bool) -> Obj:
        """The one-row Table a watch event carries; column definitions only when `headers`."""
        table = self._table([obj], {}, now)
        if not headers:
            table["columnDefinitions"] = []
        return table

    def _table(self, objects: list[Obj], metadata: Obj, now: datetime) -> Obj:
        columns = self.columns
        return {
            "kind": "Table",
            "apiVersion": TABLE_API_VERSION,
            "metadata": metadata,
            "columnDefinitions": [_NAME_COLUMN, *(c.definition() for c in columns)],
            "rows": [self._row(obj, columns, now) for obj in objects],
        }

    def _row(self, obj: Obj, columns: tuple[Column, ...], now: datetime) -> Obj:
        cells = [obj.get("metadata", {}).get("name", "")]
        cells.extend(_cell(c, _lookup(obj, c.json_path), now) for c in columns)
        row: Obj = {"cells": cells}
        if self.include is IncludeObject.OBJECT:
            row["object"] = obj
        elif self.include is IncludeObject.METADATA:
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": TABLE_API_VERSION,
                "metadata": obj.get("metadata", {}),
            }
        return row


class TableEvents:
    """Turns a watch's objects into Tables; only the first carries the column definitions."""

    def __init__(self, view: TableView, now: Callable[[], datetime]) -> None:
        self._view = view
        self._now = now
        self._lock = threading.Lock()
        self._sent_headers = False

    def __call__(self, obj: Obj) -> Obj:
        with self._lock:
            headers, self._sent_headers = not self._sent_headers, True
        return self._view.of_event(obj, self._now(), headers=headers)


def table_view(accept: str, query: dict[str, str], res: Resource) -> TableView | None:
    """The view a request asks for, or None when it asks for plain objects."""
    if not wants_table(accept):
        return None
    raw = query.get("includeObject") or IncludeObject.METADATA.value
    try:
        include = IncludeObject(raw)
    except ValueError:
        allowed = ", ".join(i.value for i in IncludeObject)
        raise HttpError(400, f"includeObject {raw!r} is not one of {allowed}") from None
    return TableView(res, include)


def _lookup(obj: Obj, json_path: str) -> Any:
    """A simple JSONPath (`.status.display.state`): dotted field names from the root."""
    value: Any = obj
    for name in json_path.strip("{}").lstrip("$").strip(".").split("."):
        if not isinstance(value, dict) or name not in value:
            return None
        value = value[name]
    return value


def _cell(column: Column, value: Any, now: datetime) -> Any:
    if value is None:
        return None
    if column.type == "date":
        return _age(value, now)
    if column.type == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if column.type == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if column.type == "boolean" and isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def _age(value: Any, now: datetime) -> str:
    try:
        then = datetime.fromisoformat(str(value))
    except ValueError:
        return "<invalid>"
    if then.tzinfo is None:
        return "<invalid>"
    return human_duration((now - then).total_seconds())


def human_duration(seconds: float) -> str:
    """An age as kubectl prints it: precise when young, coarser as it grows."""
    if seconds < -1:
        return "<invalid>"
    s = max(int(seconds), 0)
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return _two(minutes, "m", s % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return _two(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return _two(days, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        return _two(years, "y", days % 365, "d")
    return f"{years}y"


def _two(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big}{big_unit}" if small == 0 else f"{big}{big_unit}{small}{small_unit}"
