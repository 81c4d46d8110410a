"""Validation of a custom resource against its structural schema, as kube-apiserver answers it.

kube-openapi's schema validator, node by node in its order (type, string length and pattern,
format, number range, list items and size, enum, object fields and required), with its messages
(`spec.x in body must be of type integer: "string"`, `spec.x in body should be at least 1 chars
long`, ...), turned into apimachinery field errors as apiextensions-apiserver turns them:
- required: `spec.helm.chart: Required value`;
- enum: `spec.targetMode: Unsupported value: "Bogus": supported values: "FirstMatch", ...`, the
  values in the schema's order;
- type and format: `Invalid value: "string": <message>` (the value is the JSON type found, or
  the string that is not of the format);
- maxLength: `Too long: may not be more than N bytes`; maxItems: `Too many: 3: must have at most
  2 items`;
- the others (minLength, pattern, minimum, maximum, minItems): `Invalid value: <value>: <message>`;
- a number outside its type's range (an integer that is not whole or beyond int64, or beyond
  int32 with `format: int32`): kube-openapi's plain error, which lands on no path (Go prints a nil
  path as `<nil>`) with an empty value: `<nil>: Invalid value: "": Checked value must be of type
  integer (default format) in spec.x`.

Status writes validate `status` alone, their errors under `status.` (the messages name the path
below status, as the real server's do). Updates ratchet, as Kubernetes does since 1.30: a node
whose value equals the stored one (fields by name, items of `x-kubernetes-list-type: map` lists
by their keys) is not validated, so objects stored before a schema tightened can still be edited
elsewhere. Not checked: multipleOf, uniqueItems, min/maxProperties, allOf/anyOf/oneOf/not,
x-kubernetes-validations (CEL) and the list-type map/set invariants.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum
from typing import Any

import re2

from bundler.apiserver import field_errors
from bundler.apiserver.field_errors import FieldError
from bundler.apiserver.formats import valid
from bundler.apiserver.go_values import go_json, go_quote, go_value
from bundler.apiserver.structural import MISSING, Structural
from bundler.core.json_equality import json_equal

_IN = "body"
_INT64 = 2**63
_INT32 = 2**31
_FLOAT32_MAX = 3.4028234663852886e38
# Floats this close to zero in whole numbers are integers to kube-openapi (JSON's safe range).
_JSON_SAFE_INTEGER = 2**53
_NUMBER_FORMATS = {"integer": ("int32", "int64"), "number": ("float", "double")}


class _Code(Enum):
    TYPE = "type"
    REQUIRED = "required"
    ENUM = "enum"
    TOO_LONG = "too long"
    MAX_ITEMS = "max items"
    OTHER = "other"
    PLAIN = "plain"


@dataclass(frozen=True)
class _Failure:
    """One of kube-openapi's errors: its kind, the path it names, its message and value."""

    code: _Code
    name: str
    message: str
    value: Any = ""
    limit: int = -1
    values: tuple[Any, ...] = ()


def validate(
    value: Any, schema: Structural, *, old: Any = MISSING, under: str = ""
) -> list[FieldError]:
    """The field errors of `value` against `schema`; `old` the stored value when updating (for
    ratcheting), `under` the path of `value` in its object ("status" for a status write)."""
    distinct: dict[str, _Failure] = {}
    for failure in _node(value, schema, "", old):
        distinct.setdefault(failure.message, failure)
    return [_field_error(f, under) for f in distinct.values()]


def _node(value: Any, schema: Structural, name: str, old: Any) -> list[_Failure]:
    if old is not MISSING and json_equal(value, old):
        return []
    if value is None:
        return [*_type(value, schema, name), *_enum(value, schema, name)]
    value = _as_go_number(value)
    found = _type(value, schema, name)
    if isinstance(value, str):
        found += _string(value, schema, name)
        if schema.format:
            found += _format(value, schema, name)
    elif _is_number(value):
        found += _number(value, schema, name)
    elif isinstance(value, list):
        found += _list(value, schema, name, old)
    found += _enum(value, schema, name)
    if isinstance(value, dict):
        found += _object(value, schema, name, old)
    return found


def _type(value: Any, schema: Structural, name: str) -> list[_Failure]:
    types, fmt = schema.types, schema.format
    if not types and not fmt:
        return []
    if value is None:
        if types and "null" not in types and not schema.nullable:
            return [_type_failure(name, ",".join(types), "null")]
        return []
    found, found_format = _json_type(value)
    float_int = found == "number" and _whole(value) and "integer" in types
    int_float = found == "integer" and "number" in types
    fitting = found in types or float_int or int_float
    text_or_list = isinstance(value, str | list)
    if not text_or_list and fmt and not (fitting or found_format == fmt):
        return [_type_failure(name, fmt, found_format)]
    if not ("number" in types or "integer" in types) and fmt and text_or_list:
        return []
    return [] if fitting else [_type_failure(name, ",".join(types), found)]


def _string(value: str, schema: Structural, name: str) -> list[_Failure]:
    if schema.max_length is not None and len(value) > schema.max_length:
        message = f"{name} in {_IN} should be at most {schema.max_length} chars long"
        return [_Failure(_Code.TOO_LONG, name, message, value, schema.max_length)]
    if schema.min_length is not None and len(value) < schema.min_length:
        message = f"{name} in {_IN} should be at least {schema.min_length} chars long"
        return [_Failure(_Code.OTHER, name, message, value)]
    if schema.pattern:
        pattern = _regex(schema.pattern)
        if isinstance(pattern, str):
            shown = f"{schema.pattern}, but pattern is invalid: {pattern}"
            return [_Failure(_Code.OTHER, name, f"{name} in {_IN} should match '{shown}'", value)]
        if pattern.search(value) is None:
            message = f"{name} in {_IN} should match '{schema.pattern}'"
            return [_Failure(_Code.OTHER, name, message, value)]
    return []


def _format(value: str, schema: Structural, name: str) -> list[_Failure]:
    if valid(schema.format, value):
        return []
    message = f"{name} in {_IN} must be of type {schema.format}: {go_quote(value)}"
    return [_Failure(_Code.TYPE, name, message, value)]


def _number(value: int | float, schema: Structural, name: str) -> list[_Failure]:
    kind = schema.types[0] if len(schema.types) == 1 else ""
    kind = kind if kind in _NUMBER_FORMATS else ""
    fmt = schema.format if kind and schema.format in _NUMBER_FORMATS[kind] else ""
    found = [f for f in (_out_of_range(value, kind, fmt, "Checked", name),) if f is not None]
    for bound, exclusive, upper in (
        (schema.minimum, schema.exclusive_minimum, False),
        (schema.maximum, schema.exclusive_maximum, True),
    ):
        if bound is None:
            continue
        boundary = "Maximum boundary" if upper else "Minimum boundary"
        unfit = _out_of_range(bound, kind, fmt, boundary, name)
        if unfit is not None:
            found.append(unfit)
        native = unfit is None and isinstance(value, int)
        limit: int | float = int(bound) if native else bound
        compared = value if native else float(value)
        if _beyond(compared, limit, exclusive, upper):
            found.append(
                _Failure(_Code.OTHER, name, _bound_message(name, limit, exclusive, upper), value)
            )
    return found


def _list(value: list[Any], schema: Structural, name: str, old: Any) -> list[_Failure]:
    found: list[_Failure] = []
    if schema.items is not None:
        olds = _correlated_items(value, old, schema)
        for index, item in enumerate(value):
            found += _node(item, schema.items, f"{name}[{index}]", olds[index])
    size = len(value)
    if schema.min_items is not None and size < schema.min_items:
        message = f"{name} in {_IN} should have at least {schema.min_items} items"
        found.append(_Failure(_Code.OTHER, name, message, size))
    if schema.max_items is not None and size > schema.max_items:
        message = f"{name} in {_IN} should have at most {schema.max_items} items"
        found.append(_Failure(_Code.MAX_ITEMS, name, message, size, schema.max_items))
    return found


def _enum(value: Any, schema: Structural, name: str) -> list[_Failure]:
    if not schema.enum or any(_enum_matches(value, allowed) for allowed in schema.enum):
        return []
    listed = " ".join(_go_print(v) for v in schema.enum)
    message = f"{name} in {_IN} should be one of [{listed}]"
    return [_Failure(_Code.ENUM, name, message, value, values=schema.enum)]


def _object(value: dict[str, Any], schema: Structural, name: str, old: Any) -> list[_Failure]:
    found: list[_Failure] = []
    olds = old if isinstance(old, dict) else {}
    for key, item in value.items():
        prop = schema.properties.get(key)
        if prop is not None:
            child_name = f"{name}.{key}" if name else key
        elif schema.additional is not None:
            prop, child_name = schema.additional, f"{name}.{key}"
        else:
            continue
        found += _node(item, prop, child_name, olds.get(key, MISSING))
    for key in schema.required:
        if key not in value:
            path = f"{name}.{key}"
            found.append(_Failure(_Code.REQUIRED, path, f"{path} in {_IN} is required"))
    return found


def _field_error(failure: _Failure, under: str) -> FieldError:
    if failure.code is _Code.PLAIN:
        # A nil field.Path: Go prints it as <nil>, in the message and in the cause alike.
        return field_errors.invalid_value(under or "<nil>", "", failure.message)
    trimmed = failure.name.removeprefix(".")
    path = under if failure.name in ("", ".") else (f"{under}.{trimmed}" if under else trimmed)
    if failure.code is _Code.REQUIRED:
        return field_errors.required(path)
    if failure.code is _Code.ENUM:
        supported = [v if isinstance(v, str) else go_json(v) for v in failure.values]
        return field_errors.not_supported(path, failure.value, supported)
    if failure.code is _Code.TOO_LONG:
        return field_errors.too_long(path, failure.limit)
    if failure.code is _Code.MAX_ITEMS:
        return field_errors.too_many(path, failure.value, failure.limit)
    if failure.code is _Code.TYPE:
        return field_errors.type_invalid(path, failure.value, failure.message)
    return field_errors.invalid_value(path, failure.value, failure.message)


def _type_failure(name: str, expected: str, found: str) -> _Failure:
    message = f"{name} in {_IN} must be of type {expected}: {go_quote(found)}"
    return _Failure(_Code.TYPE, name, message, found)


def _json_type(value: Any) -> tuple[str, str]:
    """The JSON type of a (non-null) value and the format kube-openapi infers for it."""
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, int):
        return "integer", "int64"
    if isinstance(value, float):
        return "number", "float64"
    if isinstance(value, str):
        return "string", ""
    if isinstance(value, list):
        return "array", ""
    return "object", ""


def _as_go_number(value: Any) -> Any:
    """Go decodes a JSON integer beyond int64 as a float."""
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return float(value)
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer() and abs(value) <= _JSON_SAFE_INTEGER


def _out_of_range(
    value: int | float, kind: str, fmt: str, prefix: str, name: str
) -> _Failure | None:
    """kube-openapi's range check of a number (or a bound) against the schema's type and format."""
    if kind == "integer":
        whole = isinstance(value, int) or value.is_integer()
        limit = _INT32 if fmt == "int32" else _INT64
        fits = whole and -limit <= int(value) < limit
    else:
        fits = fmt != "float" or abs(value) <= _FLOAT32_MAX
    if fits:
        return None
    shown = f"with format {fmt}" if fmt else "(default format)"
    message = f"{prefix} value must be of type {kind or 'number'} {shown} in {name}"
    return _Failure(_Code.PLAIN, name, message)


def _beyond(value: int | float, limit: int | float, exclusive: bool, upper: bool) -> bool:
    if upper:
        return value >= limit if exclusive else value > limit
    return value <= limit if exclusive else value < limit


def _bound_message(name: str, limit: int | float, exclusive: bool, upper: bool) -> str:
    relation = ("less" if upper else "greater") + (" than" if exclusive else " than or equal to")
    return f"{name} in {_IN} should be {relation} {go_value(limit)}"


def _enum_matches(value: Any, allowed: Any) -> bool:
    return value is not None and allowed is not None and json_equal(value, allowed)


def _go_print(value: Any) -> str:
    """`%v` of a value inside a Go slice, as the enum message lists them."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return go_value(value)
    return go_json(value)


def _correlated_items(value: list[Any], old: Any, schema: Structural) -> list[Any]:
    """For each item, the stored item it updates: only map-type lists correlate, by their keys."""
    if schema.list_type != "map" or not schema.list_map_keys or not isinstance(old, list):
        return [MISSING] * len(value)
    by_key = {_map_key(item, schema.list_map_keys): item for item in reversed(old)}
    return [by_key.get(_map_key(item, schema.list_map_keys), MISSING) for item in value]


def _map_key(item: Any, keys: tuple[str, ...]) -> str:
    fields = item if isinstance(item, dict) else {}
    return go_json([fields.get(k) for k in keys])


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    """The compiled pattern (RE2, as Go's regexp: linear time, `$` only at the end), or why it
    does not compile (a str)."""
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        cause = error.args[0] if error.args else error
        return cause.decode(errors="replace") if isinstance(cause, bytes) else str(cause)
