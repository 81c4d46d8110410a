"""Kubernetes `Status` objects: how the test API server reports every error.

Store errors map to the status code and reason a real API server would answer with, so a client
written against this server branches the same way against a real one.
"""

from __future__ import annotations

from http import HTTPStatus

from bundler.api.resources import Resource
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
from bundler.store.protocol import Obj

# Reasons of the Status objects, by code, as the Kubernetes API server spells them.
REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}

_STORE_REASONS: list[tuple[type[StoreError], str]] = [
    (AlreadyExists, "AlreadyExists"),
    (Conflict, "Conflict"),
    (KindNotServed, "NotFound"),
    (NotFound, "NotFound"),
    (Gone, "Expired"),
    (Invalid, "Invalid"),
    (Forbidden, "Forbidden"),
    (Unavailable, "ServiceUnavailable"),
]


class HttpError(Exception):
    """An error answer: HTTP code, Status reason and message, and an optional Retry-After."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        retry_after: int | None = None,
        details: Obj | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code) or HTTPStatus(code).phrase.replace(" ", "")
        self.retry_after = retry_after
        self.details = details

    def status(self) -> Obj:
        """The Status object for the response body (or a watch ERROR event)."""
        status: Obj = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        details = dict(self.details or {})
        if self.retry_after is not None:
            details["retryAfterSeconds"] = self.retry_after
        if details:
            status["details"] = details
        return status


def object_details(res: Resource, name: str | None) -> Obj:
    details: Obj = {"group": res.group, "kind": res.plural}
    if name:
        details["name"] = name
    return details


def from_store_error(error: StoreError, res: Resource, name: str | None) -> HttpError:
    reason = next((r for cls, r in _STORE_REASONS if isinstance(error, cls)), None)
    return HttpError(error.code, str(error), reason=reason, details=object_details(res, name))


def success(res: Resource, name: str, uid: str | None) -> Obj:
    """What a finished deletion of a built-in kind answers with."""
    details = object_details(res, name)
    if uid:
        details["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
