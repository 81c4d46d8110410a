"""Query-string selectors: equality-based `labelSelector` and `fieldSelector` (`a=b,c==d`).

Set-based and inequality forms are refused with 400 rather than half-understood: the store contract
only has equality label matching, so a client relying on more would be wrong against it.
"""

from __future__ import annotations

from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj

# Field selectors every kind supports on a real API server.
_FIELDS = ("metadata.name", "metadata.namespace")


def parse_equality_selector(text: str, what: str) -> dict[str, str]:
    """`a=b,c==d` as a mapping; anything else (`!=`, `in`, `!a`, bare keys) is a 400."""
    wanted: dict[str, str] = {}
    for term in (t.strip() for t in text.split(",")):
        if not term:
            continue
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or key.endswith("!") or " " in key or "=" in value:
            raise HttpError(
                400,
                f"unsupported {what} {text!r}: this server only understands key=value terms",
            )
        wanted[key] = value
    return wanted


def parse_field_selector(text: str) -> dict[str, str]:
    wanted = parse_equality_selector(text, "fieldSelector")
    unknown = sorted(set(wanted) - set(_FIELDS))
    if unknown:
        raise HttpError(400, f"field label not supported: {', '.join(unknown)}")
    return wanted


def fields_match(obj: Obj, wanted: dict[str, str]) -> bool:
    meta = obj.get("metadata", {})
    return all(meta.get(field.removeprefix("metadata."), "") == v for field, v in wanted.items())
