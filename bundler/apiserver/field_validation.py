"""Server-side field validation: the `fieldValidation` parameter of writes, as kube-apiserver
answers it for custom resources.

`Ignore`, `Warn` (the default when the parameter is absent) or `Strict` - kubectl sends `Strict`
for `--validate=strict` (its default), `Warn` and `Ignore` for the others; any other value is 422
`CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: ...` (UpdateOptions,
PatchOptions by verb). What it governs are the strict decoding errors of the object written:
`duplicate field "spec.x"` for a key repeated in the JSON body (found as Go's strict decoder finds
them, at most 100) and `unknown field "spec.x"` for each field pruning dropped. With `Ignore` they
pass silently, with `Warn` each becomes a `Warning` header (the object is stored pruned), with
`Strict` the write is refused:
- create and update: 400 `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding
  error: unknown field "spec.foo"`;
- patch: 422 ` "" is invalid: patch: Invalid value: "<the patched object as JSON>": strict
  decoding error: ...` (the patch handler's own form, with no kind and no name).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.api.resources import Resource, Verb
from bundler.apiserver.field_errors import invalid, invalid_value, not_supported
from bundler.apiserver.go_values import go_quote
from bundler.apiserver.response_warnings import Warnings
from bundler.apiserver.statuses import HttpError

PARAMETER = "fieldValidation"
# Go's strict decoder stops recording after this many errors.
MAX_DECODING_ERRORS = 100
_OPTIONS = {Verb.CREATE: "CreateOptions", Verb.UPDATE: "UpdateOptions", Verb.PATCH: "PatchOptions"}
_META_GROUP = "meta.k8s.io"


class Directive(StrEnum):
    IGNORE = "Ignore"
    WARN = "Warn"
    STRICT = "Strict"


@dataclass(frozen=True)
class Parsed:
    """A JSON body and the paths of the fields it repeats."""

    value: Any
    duplicates: list[str]


def directive(verb: Verb, query: dict[str, str]) -> Directive:
    """The directive of a write; 422 for a value kube-apiserver does not know."""
    value = query.get(PARAMETER, "")
    if not value:
        return Directive.WARN
    if value in tuple(Directive):
        return Directive(value)
    supported = sorted(["", *Directive])
    raise invalid(_OPTIONS[verb], _META_GROUP, "", [not_supported(PARAMETER, value, supported)])


def parse(body: bytes, directive: Directive) -> Parsed | None:
    """The JSON body (None when it is not JSON), with its repeated fields unless ignored."""
    try:
        if directive is Directive.IGNORE:
            return Parsed(json.loads(body or b"null"), [])
        raw = json.loads(body or b"null", object_pairs_hook=_Pairs)
    except (ValueError, UnicodeDecodeError):
        return None
    duplicates: list[str] = []
    return Parsed(
        _plain(raw, "", duplicates), list(dict.fromkeys(duplicates))[:MAX_DECODING_ERRORS]
    )


def enforce(
    directive: Directive,
    verb: Verb,
    res: Resource,
    parsed: Parsed,
    unknown: list[str],
    patched: str,
    warnings: Warnings,
) -> None:
    """Answer the strict decoding errors of a write as `directive` asks; `patched` is the
    patched object as JSON (for a patch refused with Strict)."""
    errors = [f"duplicate field {go_quote(p)}" for p in parsed.duplicates]
    errors += [f'unknown field "{p}"' for p in unknown]
    if not errors or directive is Directive.IGNORE:
        return
    if directive is Directive.WARN:
        for error in errors:
            warnings.add(error)
        return
    message = "strict decoding error: " + ", ".join(errors)
    if verb is Verb.PATCH:
        raise invalid("", "", "", [invalid_value("patch", patched, message)])
    raise HttpError(
        400,
        f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {message}',
        reason="BadRequest",
    )


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its key-value pairs, repeated keys included."""


def _plain(value: Any, path: str, duplicates: list[str]) -> Any:
    """`value` with its objects as dicts (the last of repeated keys wins, as in Go), recording
    the repeated keys' paths in document order."""
    if isinstance(value, _Pairs):
        seen: dict[str, Any] = {}
        for key, item in value:
            where = f"{path}.{key}" if path else key
            if key in seen:
                duplicates.append(where)
            seen[key] = _plain(item, where, duplicates)
        return seen
    if isinstance(value, list):
        return [_plain(item, f"{path}[{i}]", duplicates) for i, item in enumerate(value)]
    return value
