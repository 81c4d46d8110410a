"""Errors of the store contract, mirroring the API server's status codes.

Controllers branch on these classes, never on HTTP codes; backends translate at their boundary.
"""

from __future__ import annotations

from bundler.errors import BundlerError, InvalidInputError, TransientError


class StoreError(BundlerError):
    """Base of errors raised by a store backend."""

    code: int = 500


class NotFound(StoreError):
    code = 404


class AlreadyExists(StoreError):
    code = 409


class Conflict(StoreError, TransientError):
    """The object changed since it was read (409): read it again and retry."""

    code = 409


class Gone(StoreError, TransientError):
    """A watch asked for a resourceVersion that is too old (410): relist."""

    code = 410


class Invalid(StoreError, InvalidInputError):
    code = 422


class Forbidden(StoreError):
    code = 403


class KindNotServed(StoreError):
    """The server does not serve this group/version/kind (e.g. Flux is not installed)."""

    code = 404


class Unavailable(StoreError, TransientError):
    """The server could not be reached or answered 429/5xx after retries."""

    code = 503
