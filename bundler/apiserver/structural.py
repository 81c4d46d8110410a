"""A custom resource's structural schema, compiled once from a CRD's openAPIV3Schema.

The shape apiextensions-apiserver works on (its `Structural`): per node the types, properties,
additionalProperties and items, and the value validations pruning, defaulting and validation
need. As kube-apiserver converts a CRD schema for validation:
- `x-kubernetes-int-or-string` makes the types `integer,string`;
- a `format` Kubernetes does not know for the node's type is dropped (then nothing checks it):
  the string formats of bundler.apiserver.formats, `int32`/`int64` for integers,
  `float`/`double` for numbers;
- `additionalProperties` counts only as a schema (a boolean is no schema).
A CRD stored in the stand-in is not checked as kube-apiserver checks CRDs, so what is not of the
shape a structural schema has (a `required` that is no list, say) is read as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bundler.apiserver.formats import is_string_format

INTEGER_FORMATS = frozenset({"int32", "int64"})
NUMBER_FORMATS = frozenset({"float", "double"})


class _Missing:
    """The absence of a value where None (JSON null) is a value."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True, eq=False)
class Structural:
    """One node of a structural schema; `has_defaults` tells whether any node below has one."""

    types: tuple[str, ...] = ()
    nullable: bool = False
    properties: Mapping[str, Structural] = field(default_factory=dict)
    additional: Structural | None = None
    items: Structural | None = None
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] = ()
    format: str = ""
    pattern: str = ""
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_items: int | None = None
    max_items: int | None = None
    preserve_unknown: bool = False
    embedded_resource: bool = False
    default: Any = MISSING
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    has_defaults: bool = False

    def child(self, key: str) -> Structural | None:
        """The schema of an object's field `key`: its property, else additionalProperties."""
        found = self.properties.get(key)
        return found if found is not None else self.additional


def compile_schema(raw: Mapping[str, Any]) -> Structural:
    """The structural schema of an openAPIV3Schema (or one node of it)."""
    properties = {
        str(k): compile_schema(v)
        for k, v in (raw.get("properties") or {}).items()
        if isinstance(v, Mapping)
    }
    additional_raw = raw.get("additionalProperties")
    additional = compile_schema(additional_raw) if isinstance(additional_raw, Mapping) else None
    items_raw = raw.get("items")
    items = compile_schema(items_raw) if isinstance(items_raw, Mapping) else None
    int_or_string = raw.get("x-kubernetes-int-or-string") is True
    types = ("integer", "string") if int_or_string else _types(raw.get("type"))
    # A null default is no default, for pruning and for defaulting alike.
    default = raw.get("default", MISSING)
    if default is None:
        default = MISSING
    below = [*properties.values(), additional, items]
    return Structural(
        types=types,
        nullable=raw.get("nullable") is True,
        properties=properties,
        additional=additional,
        items=items,
        required=_strings(raw.get("required")),
        enum=tuple(raw["enum"]) if isinstance(raw.get("enum"), list) else (),
        format=_supported_format(str(raw.get("format") or ""), types),
        pattern=str(raw.get("pattern") or ""),
        min_length=_integer(raw.get("minLength")),
        max_length=_integer(raw.get("maxLength")),
        minimum=_number(raw.get("minimum")),
        maximum=_number(raw.get("maximum")),
        exclusive_minimum=raw.get("exclusiveMinimum") is True,
        exclusive_maximum=raw.get("exclusiveMaximum") is True,
        min_items=_integer(raw.get("minItems")),
        max_items=_integer(raw.get("maxItems")),
        preserve_unknown=raw.get("x-kubernetes-preserve-unknown-fields") is True,
        embedded_resource=raw.get("x-kubernetes-embedded-resource") is True,
        default=default,
        list_type=str(raw.get("x-kubernetes-list-type") or ""),
        list_map_keys=_strings(raw.get("x-kubernetes-list-map-keys")),
        has_defaults=default is not MISSING or any(n is not None and n.has_defaults for n in below),
    )


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _types(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) and value else ()


def _supported_format(value: str, types: tuple[str, ...]) -> str:
    kind = types[0] if len(types) == 1 else ""
    if kind in ("", "string"):
        return value if is_string_format(value) else ""
    if kind == "integer":
        return value if value in INTEGER_FORMATS else ""
    if kind == "number":
        return value if value in NUMBER_FORMATS else ""
    return ""


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
