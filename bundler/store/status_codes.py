"""The Kubernetes `Status` vocabulary: the reason an API server gives with each HTTP code, and the
reason that goes with each store error.

The test API server (bundler.apiserver) answers with these reasons and the network backend
(bundler.kube) reads them back into store errors, so both sides spell them from this one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

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


class StatusReason(StrEnum):
    """`Status.reason`, as the Kubernetes API server spells it."""

    BAD_REQUEST = "BadRequest"
    UNAUTHORIZED = "Unauthorized"
    FORBIDDEN = "Forbidden"
    NOT_FOUND = "NotFound"
    METHOD_NOT_ALLOWED = "MethodNotAllowed"
    ALREADY_EXISTS = "AlreadyExists"
    CONFLICT = "Conflict"
    EXPIRED = "Expired"
    UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
    INVALID = "Invalid"
    TOO_MANY_REQUESTS = "TooManyRequests"
    INTERNAL_ERROR = "InternalError"
    SERVICE_UNAVAILABLE = "ServiceUnavailable"


# The reason that goes with each code unless the error says more (409 can also be AlreadyExists).
REASONS: Mapping[int, StatusReason] = {
    400: StatusReason.BAD_REQUEST,
    401: StatusReason.UNAUTHORIZED,
    403: StatusReason.FORBIDDEN,
    404: StatusReason.NOT_FOUND,
    405: StatusReason.METHOD_NOT_ALLOWED,
    409: StatusReason.CONFLICT,
    410: StatusReason.EXPIRED,
    415: StatusReason.UNSUPPORTED_MEDIA_TYPE,
    422: StatusReason.INVALID,
    429: StatusReason.TOO_MANY_REQUESTS,
    500: StatusReason.INTERNAL_ERROR,
    503: StatusReason.SERVICE_UNAVAILABLE,
}

# The code of each of these is the class's own `code`.
_ERROR_REASONS: tuple[tuple[type[StoreError], StatusReason], ...] = (
    (AlreadyExists, StatusReason.ALREADY_EXISTS),
    (Conflict, StatusReason.CONFLICT),
    (KindNotServed, StatusReason.NOT_FOUND),
    (NotFound, StatusReason.NOT_FOUND),
    (Gone, StatusReason.EXPIRED),
    (Invalid, StatusReason.INVALID),
    (Forbidden, StatusReason.FORBIDDEN),
    (Unavailable, StatusReason.SERVICE_UNAVAILABLE),
)


def reason_for(error: StoreError) -> StatusReason | None:
    """The reason a server answers `error` with; None for a StoreError of no particular kind."""
    return next((reason for cls, reason in _ERROR_REASONS if isinstance(error, cls)), None)
