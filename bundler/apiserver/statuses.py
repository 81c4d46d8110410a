"""Kubernetes `Status` objects: how the test API server reports every error.

Store errors map to the status code and reason a real API server would answer with, so a client
written against this server branches the same way against a real one.
"""

from __future__ import annotations

from http import HTTPStatus

from bundler.api.resources import Resource
from bundler.store.errors import StoreError
from bundler.store.protocol import Obj
from bundler.store.status_codes import REASONS, reason_for


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
        # "" is a reason too: StatusReasonUnknown, left out of the body as Kubernetes does.
        if reason is None:
            reason = REASONS.get(code) or HTTPStatus(code).phrase.replace(" ", "")
        self.reason = reason
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
            "code": self.code,
        }
        if self.reason:
            status["reason"] = self.reason
        details = dict(self.details or {})
        if self.retry_after is not None:
            details["retryAfterSeconds"] = self.retry_after
        if details or self.details is not None:  # an empty one is sent as {}, as Kubernetes does
            status["details"] = details
        return status


def object_details(res: Resource, name: str | None) -> Obj:
    details: Obj = {"group": res.group, "kind": res.plural}
    if name:
        details["name"] = name
    return details


def from_store_error(error: StoreError, res: Resource, name: str | None) -> HttpError:
    return HttpError(
        error.code, str(error), reason=reason_for(error), details=object_details(res, name)
    )


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
