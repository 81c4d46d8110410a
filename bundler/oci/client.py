"""bundler's oras registry client: bounded in time and size, no retry loops, errors that name the
reference.

`RegistryClient` is an `oras.provider.Registry` whose `do_request` (the one method every oras
operation sends through) is replaced, so that:
- a client is one operation: used as a context manager, it enters its `Deadline` (bundler.oci.
  deadline), which bounds every request it sends together, however slowly the server answers;
- each request has a timeout (never more than what is left of the deadline) and is tried once:
  oras's own retry decorator sleeps for about two minutes on a dead port, bundler fails at once
  with a TransientError (the caller retries);
- bodies are streamed: a caller asking for a stream reads it with `read_body` and its own cap;
  any other body (oras's answers, error bodies) is read here, capped at MAX_METADATA_BYTES;
- a 401 is answered once with `ChallengeAuth` (basic or bearer), never from the Docker config;
- every failed status becomes a bundler error naming the reference and the registry's own
  error code, except a 404 on HEAD, which oras uses to ask whether a blob exists.
"""

from __future__ import annotations

import re
from typing import Any

import requests
from oras.provider import Registry

from bundler.errors import (
    BundlerError,
    InvalidInputError,
    RegistryAnswerError,
    RegistryAuthError,
    TransientError,
)
from bundler.oci.auth import ChallengeAuth
from bundler.oci.credentials import Credentials
from bundler.oci.deadline import Deadline, watch_session
from bundler.oci.limits import MAX_METADATA_BYTES, Transfer, read_body, send

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_DEADLINE_S = 300.0

_CAUSES = (
    re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)"),
    re.compile(r"\[SSL: [A-Z_]+\] ([^'\")(]+)"),
)


class RegistryClient(Registry):  # type: ignore[misc]  # oras ships no type hints
    """An oras client for one registry host, labelled with the reference it serves (for errors)."""

    def __init__(
        self,
        host: str,
        *,
        reference: str,
        credentials: Credentials | None = None,
        plain_http: bool = False,
        tls_verify: bool | str = True,
        timeout: float = DEFAULT_TIMEOUT_S,
        deadline: float = DEFAULT_DEADLINE_S,
    ) -> None:
        super().__init__(hostname=host, insecure=plain_http, tls_verify=tls_verify)
        self.reference = reference
        self._timeout = timeout
        self.deadline = Deadline(deadline)
        watch_session(self.session)
        self.auth = ChallengeAuth(
            credentials,
            session=self.session,
            timeout=timeout,
            tls_verify=tls_verify,
            reference=reference,
            deadline=self.deadline,
        )

    def __enter__(self) -> RegistryClient:
        self.deadline.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.deadline.__exit__(None, None, None)
        self.session.close()

    def transfer(self, what: str) -> Transfer:
        """The description of a body this client reads, for `read_body` and its errors."""
        return Transfer(what, f"registry {self.hostname}", self.reference, self.deadline)

    def do_request(
        self,
        url: str,
        method: str = "GET",
        data: dict[str, Any] | bytes | None = None,
        headers: dict[str, str] | None = None,
        json: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> requests.Response:
        sent = {**(headers or {}), **self.auth.get_auth_header()}
        request = {"data": data, "json": json}
        response = self._send(method, url, sent, request, stream)
        if response.status_code == 401:
            sent, answered = self.auth.authenticate_request(response, sent)
            if answered:
                response = self._send(method, url, sent, request, stream)
        self._raise_for_status(method, response)
        return response

    def _send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        request: dict[str, Any],
        stream: bool,
    ) -> requests.Response:
        if self.deadline.expired:
            raise self.transfer("an answer").deadline_passed()
        try:
            response = send(
                self.session,
                method,
                url,
                self.transfer("an answer"),
                headers=headers,
                timeout=self._timeout,
                verify=self._tls_verify,
                **request,
            )
        except requests.exceptions.SSLError as err:
            raise InvalidInputError(
                f"TLS with {self.hostname} failed ({connection_error_cause(err)}); see --ca-file, "
                "--insecure-skip-tls-verify, or --plain-http for a registry without TLS",
                obj=self.reference,
            ) from err
        except requests.RequestException as err:
            raise self._unanswered(err) from err
        if method == "HEAD":  # no body, whatever Content-Length says (a blob's size)
            response.close()
            response._content = b""
        elif not stream or response.status_code >= 400:
            body = read_body(response, MAX_METADATA_BYTES, self.transfer("an answer"))
            # requests' own place for a body already read: .content and .json() then use it.
            response._content = body
        return response

    def _unanswered(self, err: requests.RequestException) -> TransientError:
        if self.deadline.expired:
            return self.transfer("an answer").deadline_passed()
        if isinstance(err, requests.Timeout):
            return TransientError(
                f"registry {self.hostname} did not answer within {self._timeout:g}s",
                obj=self.reference,
            )
        return TransientError(
            f"cannot reach registry {self.hostname}: {connection_error_cause(err)}",
            obj=self.reference,
        )

    def _raise_for_status(self, method: str, response: requests.Response) -> None:
        status = response.status_code
        if status < 400 or (status == 404 and method == "HEAD"):
            return
        raise _status_error(status, response, self.auth, self.reference)


def _status_error(
    status: int, response: requests.Response, auth: ChallengeAuth, reference: str
) -> BundlerError:
    detail = _registry_detail(response)
    if status == 401:
        if not auth.has_credentials:
            return RegistryAuthError(
                f"authentication required{detail}: pass --username and --password-stdin, "
                "or add the registry to the Docker config",
                obj=reference,
            )
        return RegistryAuthError(
            f"authentication failed for user {auth.username!r}{detail}", obj=reference
        )
    if status == 403:
        return RegistryAuthError(f"access denied{detail}", obj=reference)
    if status == 404:
        return RegistryAnswerError(f"not found in the registry{detail}", obj=reference)
    if status == 429 or status >= 500:
        return TransientError(f"registry error {status} {response.reason}{detail}", obj=reference)
    return InvalidInputError(
        f"registry rejected the request: {status} {response.reason}{detail}", obj=reference
    )


def _registry_detail(response: requests.Response) -> str:
    """' (CODE: message, ...)' from an OCI error body, or '' when there is none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list):
        return ""
    parts = [
        f"{error.get('code', '?')}: {error.get('message', '')}".rstrip(": ")
        for error in errors
        if isinstance(error, dict)
    ]
    return f" ({'; '.join(parts)})" if parts else ""


def connection_error_cause(err: Exception) -> str:
    """The OS- or TLS-level cause of a connection error, without urllib3's pool and URL noise."""
    for cause in _CAUSES:
        match = cause.search(str(err))
        if match:
            return match.group(1).strip()
    return type(err).__name__
