"""apimachinery's field errors and the 422 Invalid answer that carries them.

A FieldError is one of `field.Error`: a path, a type (the Status cause's reason) and the body
kube-apiserver writes for it, e.g. `Required value`, `Invalid value: "x": must be ...`,
`Unsupported value: "Bogus": supported values: "FirstMatch", "AllMatches"`. `invalid` builds
`errors.NewInvalid`: `<Kind>[.<group>] "<name>" is invalid: <errors>`, the errors listed once each
(`[a, b]` for more than one) and every one of them among `details.causes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bundler.apiserver.go_values import go_json, go_quote, go_value
from bundler.apiserver.statuses import HttpError

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"


@dataclass(frozen=True)
class FieldError:
    """One of apimachinery's field.Error: path, type and body."""

    field: str
    type: str
    body: str

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, REQUIRED, _with_detail("Required value", detail))


def invalid_value(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, INVALID, _with_detail(f"Invalid value: {_bad(value)}", detail))


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, TYPE_INVALID, _with_detail(f"Invalid value: {_bad(value)}", detail))


def not_supported(field: str, value: Any, supported: Iterable[str]) -> FieldError:
    listed = ", ".join(go_quote(v) for v in supported)
    detail = f"supported values: {listed}" if listed else ""
    return FieldError(
        field, NOT_SUPPORTED, _with_detail(f"Unsupported value: {_bad(value)}", detail)
    )


def too_long(field: str, limit: int) -> FieldError:
    unit = "byte" if limit == 1 else "bytes"
    detail = f"may not be more than {limit} {unit}" if limit >= 0 else "value is too long"
    return FieldError(field, TOO_LONG, f"Too long: {detail}")


def too_many(field: str, actual: int, limit: int) -> FieldError:
    unit = "item" if limit == 1 else "items"
    detail = f"must have at most {limit} {unit}" if limit >= 0 else "has too many items"
    return FieldError(field, TOO_MANY, f"Too many: {actual}: {detail}")


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> HttpError:
    """errors.NewInvalid for `kind` of `group` named `name`."""
    qualified = f"{kind}.{group}" if group else kind
    distinct = list(dict.fromkeys(map(str, errors)))
    listed = distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"
    # Status leaves out what is empty (omitempty), down to a cause's field.
    causes = [_omit_empty({"reason": e.type, "message": e.body, "field": e.field}) for e in errors]
    details = _omit_empty({"name": name, "group": group, "kind": kind})
    return HttpError(
        422,
        f'{qualified} "{name}" is invalid: {listed}',
        reason="Invalid",
        details={**details, "causes": causes},
    )


def _omit_empty(fields: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in fields.items() if value}


def _with_detail(text: str, detail: str) -> str:
    return f"{text}: {detail}" if detail else text


def _bad(value: Any) -> str:
    """A bad value as ErrorBody prints it: scalars with %v, strings with %q, the rest as JSON."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool | int | float):
        return go_value(value)
    return go_json(value)
