"""One HTTP exchange with the API server: bounded timeouts, retries, JSON, error translation.

Requests go through `ApiClient.param_serialize` (authentication, headers) and `ApiClient.call_api`
(the raw urllib3 response); no generated model classes are involved, objects stay plain dicts.
Every attempt first takes a token from the rate limiter (when there is one) and is counted, by
verb and status code, in the request metrics (when there are).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from bundler.api.resources import Verb
from bundler.kube.errors import error_for_response, is_retryable_status
from bundler.kube.metrics import RequestMetrics
from bundler.kube.ratelimit import TokenBucket
from bundler.kube.retry import (
    Pause,
    RetryableError,
    RetryPolicy,
    retry_after_seconds,
    sleep_pause,
    with_retries,
)
from bundler.store.errors import Unavailable
from bundler.store.protocol import Obj

Query = Sequence[tuple[str, str]]

MERGE_PATCH = "application/merge-patch+json"
JSON = "application/json"


class Method(StrEnum):
    GET = "GET"
    POST = "POST"
    PUT = "PUT"
    PATCH = "PATCH"
    DELETE = "DELETE"


# Methods whose repetition cannot create a second object: retried even when the connection broke
# after the request was sent (a repeated PUT or DELETE at worst answers Conflict or NotFound).
_REPEATABLE = frozenset({Method.GET, Method.PUT, Method.PATCH, Method.DELETE})
_OS_CAUSE = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


@dataclass(frozen=True)
class Timeouts:
    """Seconds to connect and to wait for each read of a plain request."""

    connect: float = 5.0
    read: float = 30.0


class Transport:
    """Sends requests for one ApiClient under one retry policy."""

    def __init__(
        self,
        api: ApiClient,
        policy: RetryPolicy,
        timeouts: Timeouts,
        *,
        limiter: TokenBucket | None = None,
        metrics: RequestMetrics | None = None,
    ) -> None:
        self.api = api
        self.policy = policy
        self.timeouts = timeouts
        self.limiter = limiter
        self.metrics = metrics

    def call(
        self,
        method: Method,
        path: str,
        *,
        verb: Verb,
        target: str,
        query: Query = (),
        body: Any = None,
        content_type: str = JSON,
    ) -> Obj:
        """The JSON object answering a request that must succeed (2xx) within the retry bound."""

        def attempt() -> Obj:
            timeout = (self.timeouts.connect, self.timeouts.read)
            response = self._send(method, verb, path, query, body, content_type, timeout, target)
            data = _read_body(response, method, target)
            if not 200 <= response.status <= 299:
                raise _failure(response.status, data, response.headers, target)
            return _json_object(data, target)

        return with_retries(self.policy, attempt, target=target, pause=sleep_pause)

    def open_stream(
        self, path: str, *, target: str, query: Query, read_timeout: float, pause: Pause
    ) -> urllib3.BaseHTTPResponse:
        """A GET whose 2xx body is read incrementally by the caller (a watch), retried like `call`
        until the headers arrive; `pause` lets the caller abandon the waits between attempts."""

        def attempt() -> urllib3.BaseHTTPResponse:
            timeout = (self.timeouts.connect, read_timeout)
            response = self._send(Method.GET, Verb.WATCH, path, query, None, JSON, timeout, target)
            if 200 <= response.status <= 299:
                return response
            data = _read_body(response, Method.GET, target)
            raise _failure(response.status, data, response.headers, target)

        return with_retries(self.policy, attempt, target=target, pause=pause)

    def close(self) -> None:
        self.api.close()  # type: ignore[no-untyped-call]

    def _send(
        self,
        method: Method,
        verb: Verb,
        path: str,
        query: Query,
        body: Any,
        content_type: str,
        timeout: tuple[float, float],
        target: str,
    ) -> urllib3.BaseHTTPResponse:
        if self.limiter is not None:
            waited = self.limiter.acquire()
            if self.metrics is not None:
                self.metrics.waited(waited)
        headers = {"Accept": JSON, "Content-Type": content_type}
        _, url, headers, body, _ = self.api.param_serialize(
            method.value,
            path,
            query_params=list(query),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        started = time.perf_counter()
        code: int | None = None
        try:
            rest_response = self.api.call_api(
                method.value, url, header_params=headers, body=body, _request_timeout=timeout
            )
            response: urllib3.BaseHTTPResponse = rest_response.response
            code = response.status
        except urllib3.exceptions.HTTPError as exc:
            raise _connection_failure(method, exc, target, self.api.configuration.host) from exc
        except ApiException as exc:
            # The client reports TLS failures this way (status 0): not a server answer.
            raise Unavailable(f"TLS failure: {exc.reason}", obj=target) from exc
        finally:
            if self.metrics is not None:
                self.metrics.answered(verb, code, time.perf_counter() - started)
        return response


def _read_body(response: urllib3.BaseHTTPResponse, method: Method, target: str) -> bytes:
    try:
        return response.read()
    except urllib3.exceptions.HTTPError as exc:
        raise _connection_failure(method, exc, target) from exc
    finally:
        response.release_conn()


def _failure(status: int, data: bytes, headers: Any, target: str) -> Exception:
    """What a non-2xx answer raises: RetryableError for 429/5xx, else the store error."""
    error = error_for_response(status, data, target)
    if is_retryable_status(status):
        return RetryableError(error.message, retry_after_seconds(headers))
    return error


def _json_object(data: bytes, target: str) -> Obj:
    try:
        decoded = json.loads(data) if data else {}
    except ValueError as exc:
        raise Unavailable(f"the server answered with invalid JSON: {exc}", obj=target) from exc
    if not isinstance(decoded, dict):
        raise Unavailable("the server answered with JSON that is not an object", obj=target)
    return decoded


def _connection_failure(
    method: Method, exc: Exception, target: str, server: str | None = None
) -> Exception:
    """Retry what cannot have reached the server, and what is safe to repeat; fail the rest."""
    cause = f"connection failed{f' to {server}' if server else ''}: {_reason(exc)}"
    if isinstance(exc, urllib3.exceptions.ConnectTimeoutError) or method in _REPEATABLE:
        return RetryableError(cause)
    return Unavailable(cause, obj=target)


def _reason(exc: Exception) -> str:
    """The OS-level cause (`Connection refused`) without urllib3's connection object and URL."""
    match = _OS_CAUSE.search(str(exc))
    return match.group(1).strip() if match else f"{type(exc).__name__}: {exc}"
