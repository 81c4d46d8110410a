"""Kubernetes `Status` objects: how the test API server reports every error.

Store errors map to the status code and reason a real API server would answer with, so a client
written against this server branches the same way against a real one.
"""

from __future__ import annotations

from http import HTTPStatus

from bundler.api.resources import Resource
from bundler.store.errors import AlreadyExists, Conflict, Forbidden, NotFound, StoreError
from bundler.store.protocol import Obj
from bundler.store.status_codes import REASONS, reason_for


class HttpError(Exception):
    """An error answer: HTTP code, Status reason and message, and an optional Retry-After.

    A `plain` one is sent as the text of its message, not as a Status: what kube-apiserver's
    last handler writes for a path nothing serves."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        retry_after: int | None = None,
        details: Obj | None = None,
        plain: bool = False,
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
        self.plain = plain

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
    """Status details naming an object, in kube-apiserver's order; an empty group is left out."""
    details: Obj = {"name": name} if name else {}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.plural
    return details


def from_store_error(
    error: StoreError,
    res: Resource,
    name: str | None,
    *,
    namespace: str | None = None,
    creating: bool = False,
) -> HttpError:
    """The Status kube-apiserver answers for what the store refused, in its words: `<resource>
    "<name>" not found` (for a create, its namespace is what is missing), `... already exists`,
    `Operation cannot be fulfilled on ...`, and a create in a terminating namespace's 403."""
    qualified = f"{res.plural}.{res.group}" if res.group else res.plural
    details = object_details(res, name)
    if isinstance(error, NotFound) and creating and namespace:
        message = f'namespaces "{namespace}" not found'
        return HttpError(404, message, details={"name": namespace, "kind": "namespaces"})
    if isinstance(error, NotFound):
        return HttpError(404, f'{qualified} "{name}" not found', details=details)
    if isinstance(error, AlreadyExists):
        message = f'{qualified} "{name}" already exists'
        return HttpError(409, message, reason="AlreadyExists", details=details)
    if isinstance(error, Conflict):
        return HttpError(
            409,
            f'Operation cannot be fulfilled on {qualified} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            details=details,
        )
    if isinstance(error, Forbidden) and creating and namespace:
        cause = {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
        return HttpError(
            403,
            f'{qualified} "{name}" is forbidden: unable to create new content in namespace '
            f"{namespace} because it is being terminated",
            details={**details, "causes": [cause]},
        )
    return HttpError(
        error.code, str(error), reason=reason_for(error), details=object_details(res, name)
    )


def precondition_failed(res: Resource, name: str, field: str, wanted: str, found: str) -> HttpError:
    """A delete's precondition that the object does not meet (409), as kube-apiserver says it."""
    qualified = f"{res.kind}.{res.group}" if res.group else res.kind
    after = {"UID": "deleted and then recreated", "ResourceVersion": "modified"}[field]
    return HttpError(
        409,
        f'Operation cannot be fulfilled on {qualified} "{name}": the {field} in the precondition '
        f"({wanted}) does not match the {field} in record ({found}). The object might have been "
        f"{after}",
        reason="Conflict",
        details={"name": name, **({"group": res.group} if res.group else {}), "kind": res.kind},
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
