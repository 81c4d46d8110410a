"""Translation of API server failures (HTTP status + Status body) into bundler.store.errors.

Rules, mirroring what a real API server answers:
- 404 whose body is a `Status` with reason `NotFound` that names what is missing (`details.name`
  or `details.kind`) is a missing object: the object itself, or the namespace it would be created
  in. A 404 for a group, version or plural the server does not serve names nothing: the server
  answers "the server could not find the requested resource" with empty details (older servers
  sent a plain-text "404 page not found"). Any such 404 is KindNotServed.
- 409 with reason `AlreadyExists` is AlreadyExists; any other 409 is Conflict (a stale
  resourceVersion).
- 410 Gone; 400 and 422 Invalid; 401 and 403 Forbidden; 429 and 5xx Unavailable (after retries).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bundler.store.errors import (
    AlreadyExists,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    KindNotServed,
    NotFound,
    StoreError,
    Unavailable,
)
from bundler.store.status_codes import StatusReason

# 501 Not Implemented will not heal by waiting; every other 5xx may.
_NOT_RETRYABLE_5XX = frozenset({501})
_BODY_EXCERPT = 200


def is_retryable_status(status: int) -> bool:
    return status == 429 or (500 <= status <= 599 and status not in _NOT_RETRYABLE_5XX)


def parse_status(body: bytes) -> Mapping[str, Any] | None:
    """The body as a metav1.Status, or None when it is not one (e.g. a plain-text 404 page)."""
    try:
        decoded = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        return decoded
    return None


def error_for_response(status: int, body: bytes, target: str) -> StoreError:
    """The store error for a non-2xx answer to a request about `target`."""
    parsed = parse_status(body)
    if parsed is not None:
        return error_for_status(status, parsed, target)
    excerpt = body[:_BODY_EXCERPT].decode("utf-8", errors="replace").strip()
    if status == 404:
        return KindNotServed(
            f"the server does not serve this kind (HTTP 404: {excerpt or 'no body'})", obj=target
        )
    return _by_code(status, "", excerpt or f"HTTP {status}", target)


def error_for_status(code: int, status: Mapping[str, Any], target: str) -> StoreError:
    """The store error for a metav1.Status (from a response body or a watch ERROR event)."""
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or reason or f"HTTP {code}")
    details = status.get("details") or {}
    names_missing = isinstance(details, Mapping) and bool(
        details.get("name") or details.get("kind")
    )
    if code == 404 and (reason != StatusReason.NOT_FOUND or not names_missing):
        return KindNotServed(f"the server does not serve this kind: {message}", obj=target)
    return _by_code(code, reason, message, target)


def _by_code(code: int, reason: str, message: str, target: str) -> StoreError:
    if code == 404:
        return NotFound(message, obj=target)
    if code == 409:
        if reason == StatusReason.ALREADY_EXISTS:
            return AlreadyExists(message, obj=target)
        return Conflict(message, obj=target)
    if code == 410:
        return Gone(message, obj=target)
    if code in (400, 422):
        return Invalid(message, obj=target)
    if code == 401:
        return Forbidden(
            f"unauthorized ({message}): the server refused the kubeconfig's credentials",
            obj=target,
        )
    if code == 403:
        return Forbidden(message, obj=target)
    if is_retryable_status(code):
        return Unavailable(message, obj=target)
    return StoreError(f"HTTP {code}: {message}", obj=target)
