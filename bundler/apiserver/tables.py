"""Server-side printing: answers in meta.k8s.io/v1 Table form, as kube-apiserver gives kubectl.

kubectl asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...` on get, list and
watch. A Table has `columnDefinitions` (name, type, format, description, priority) and `rows`,
each with `cells` in column order and `object`: the object's metadata as a PartialObjectMetadata
(`includeObject=Metadata`, the default), the whole object (`Object`) or null (`None`).

Columns are Name, then for the bundler kinds the CRDs' additionalPrinterColumns (which end with
Age; bundler.api.crdgen), for the built-in kinds kube-apiserver's own printers (Namespace: Status;
Secret: Type, Data; ConfigMap: Data; Lease: Holder; role bindings: Role, then Users, Groups and
ServiceAccounts for `-o wide`; Roles, ClusterRoles and CRDs: Created At; each with its Age), for
every other kind Age. Cells follow the column type, as the CRD table convertor does: missing
values are null, dates print as an age ("5m", "3h2m", "12d"). In a watch, the first event's
Table carries the column definitions, the later ones null; each carries its object's
resourceVersion.
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
from bundler.api.resources import (
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    CONFIG_MAP,
    CUSTOM_RESOURCE_DEFINITION,
    LEASE,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SECRET,
    Resource,
)
from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj

TABLE_API_VERSION = "meta.k8s.io/v1"
# kube-apiserver's descriptions: ObjectMeta's field documentation.
_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_NAME_COLUMN: Obj = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": _NAME_DESCRIPTION,
    "priority": 0,
}

Cell = Callable[[Obj, datetime], Any]


class IncludeObject(StrEnum):
    """What each row carries besides its cells (the `includeObject` query parameter)."""

    NONE = "None"
    METADATA = "Metadata"
    OBJECT = "Object"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str
    cell: Cell
    priority: int = 0

    def definition(self) -> Obj:
        return {
            "name": self.name,
            "type": self.type,
            "format": "",
            "description": self.description,
            "priority": self.priority,
        }


def _path_cell(kind: str, json_path: str) -> Cell:
    return lambda obj, now: _cell(kind, _lookup(obj, json_path), now)


def _crd_column(name: str, kind: str, json_path: str) -> Column:
    description = f"Custom resource definition column (in JSONPath format): {json_path}"
    return Column(name, kind, description, _path_cell(kind, json_path))


_CRD_COLUMNS: dict[Resource, tuple[Column, ...]] = {
    spec.resource: (
        *(_crd_column(c.name, c.type, c.json_path) for c in spec.columns),
        _crd_column("Age", "date", ".metadata.creationTimestamp"),
    )
    for spec in CRDS
}


def _age_cell(obj: Obj, now: datetime) -> Any:
    return _cell("date", _lookup(obj, ".metadata.creationTimestamp"), now)


def _count(field: str) -> Cell:
    return lambda obj, now: len(obj.get(field) or {})


def _text(json_path: str) -> Cell:
    return lambda obj, now: str(_lookup(obj, json_path) or "")


def _created_at(obj: Obj, now: datetime) -> Any:
    return str(_lookup(obj, ".metadata.creationTimestamp") or "")


def _role(obj: Obj, now: datetime) -> str:
    ref = obj.get("roleRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _subjects(kind: str) -> Cell:
    def names(obj: Obj, now: datetime) -> str:
        found = [s for s in obj.get("subjects") or [] if s.get("kind") == kind]
        if kind == "ServiceAccount":
            return ", ".join(f"{s.get('namespace', '')}/{s.get('name', '')}" for s in found)
        return ", ".join(str(s.get("name", "")) for s in found)

    return names


_AGE = Column("Age", "string", _CREATED_DESCRIPTION, _age_cell)
_CREATED_AT = Column("Created At", "date", _CREATED_DESCRIPTION, _created_at)


def _binding_columns(kind: str, role_description: str) -> tuple[Column, ...]:
    return (
        Column("Role", "string", role_description, _role),
        _AGE,
        *(
            Column(title, "string", f"{title} in the {kind}", _subjects(subject), priority=1)
            for title, subject in (
                ("Users", "User"),
                ("Groups", "Group"),
                ("ServiceAccounts", "ServiceAccount"),
            )
        ),
    )


# kube-apiserver's printers (pkg/printers/internalversion) of the built-in kinds served here.
_BUILT_IN_COLUMNS: dict[Resource, tuple[Column, ...]] = {
    NAMESPACE: (
        Column("Status", "string", "The status of the namespace", _text(".status.phase")),
        _AGE,
    ),
    SECRET: (
        Column(
            "Type",
            "string",
            "Used to facilitate programmatic handling of secret data. More info: "
            "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
            _text(".type"),
        ),
        Column(
            "Data",
            "string",
            "Data contains the secret data. Each key must consist of alphanumeric characters, "
            "'-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, "
            "representing the arbitrary (possibly non-string) data value here. Described in "
            "https://tools.ietf.org/html/rfc4648#section-4",
            _count("data"),
        ),
        _AGE,
    ),
    CONFIG_MAP: (
        Column(
            "Data",
            "string",
            "Data contains the configuration data. Each key must consist of alphanumeric "
            "characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the "
            "BinaryData field. The keys stored in Data must not overlap with the keys in the "
            "BinaryData field, this is enforced during validation process.",
            lambda obj, now: len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
        ),
        _AGE,
    ),
    LEASE: (
        Column(
            "Holder",
            "string",
            "holderIdentity contains the identity of the holder of a current lease. If "
            "Coordinated Leader Election is used, the holder identity must be equal to the "
            "elected LeaseCandidate.metadata.name field.",
            _text(".spec.holderIdentity"),
        ),
        _AGE,
    ),
    ROLE: (_CREATED_AT,),
    CLUSTER_ROLE: (_CREATED_AT,),
    CUSTOM_RESOURCE_DEFINITION: (_CREATED_AT,),
    ROLE_BINDING: _binding_columns(
        "roleBinding",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
        "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
    ),
    CLUSTER_ROLE_BINDING: _binding_columns(
        "clusterRoleBinding",
        "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef "
        "cannot be resolved, the Authorizer must return an error.",
    ),
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
        found = _CRD_COLUMNS.get(self.resource) or _BUILT_IN_COLUMNS.get(self.resource)
        return found or (_AGE,)

    def of_answer(self, answer: Obj, now: datetime) -> Obj:
        """The Table for a get (one object) or list (`items`) answer."""
        if "items" in answer:
            return self._table(answer["items"], dict(answer.get("metadata") or {}), now)
        version = answer.get("metadata", {}).get("resourceVersion")
        return self._table([answer], {} if version is None else {"resourceVersion": version}, now)

    def of_event(self, obj: Obj, now: datetime, *, headers: bool) -> Obj:
        """The one-row Table a watch event carries; column definitions only when `headers`."""
        version = obj.get("metadata", {}).get("resourceVersion")
        table = self._table([obj], {} if version is None else {"resourceVersion": version}, now)
        if not headers:
            table["columnDefinitions"] = None
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
        cells.extend(c.cell(obj, now) for c in columns)
        row: Obj = {"cells": cells, "object": None}
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


def _cell(kind: str, value: Any, now: datetime) -> Any:
    if value is None:
        return None
    if kind == "date":
        return _age(value, now)
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
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
