"""Translation of API server answers into store errors, on the bodies a real server sends."""

from __future__ import annotations

import json

import pytest

from bundler.api.resources import BUNDLE
from bundler.apiserver.statuses import from_store_error
from bundler.kube.errors import error_for_response, is_retryable_status
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

TARGET = "bundles.bundler.dev/v1alpha1 ns/b"


def status(code: int, reason: str, message: str = "boom", **details: str) -> bytes:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
    body |= {"reason": reason, "message": message, "details": details}
    return json.dumps(body).encode()


UNSERVED = "the server could not find the requested resource"


@pytest.mark.parametrize(
    ("code", "body", "expected"),
    [
        (404, status(404, "NotFound", name="b", kind="bundles"), NotFound),
        (404, status(404, "NotFound", name="ns", kind="namespaces"), NotFound),
        (404, status(404, "NotFound", UNSERVED), KindNotServed),
        (404, b"404 page not found\n", KindNotServed),
        (404, b"", KindNotServed),
        (404, status(404, "", name="b"), KindNotServed),
        (409, status(409, "AlreadyExists"), AlreadyExists),
        (409, status(409, "Conflict"), Conflict),
        (409, b"conflict", Conflict),
        (410, status(410, "Expired"), Gone),
        (422, status(422, "Invalid"), Invalid),
        (400, status(400, "BadRequest"), Invalid),
        (401, status(401, "Unauthorized"), Forbidden),
        (403, status(403, "Forbidden"), Forbidden),
        (429, status(429, "TooManyRequests"), Unavailable),
        (503, b"<html>unavailable</html>", Unavailable),
        (405, status(405, "MethodNotAllowed"), StoreError),
    ],
    ids=[
        "404-naming-object-is-missing-object",
        "404-naming-namespace-is-missing-object",
        "404-naming-nothing-is-kind-not-served",
        "404-page-is-kind-not-served",
        "404-empty-is-kind-not-served",
        "404-status-without-reason-is-kind-not-served",
        "409-already-exists",
        "409-conflict",
        "409-plain-text-is-conflict",
        "410-gone",
        "422-invalid",
        "400-invalid",
        "401-forbidden",
        "403-forbidden",
        "429-unavailable",
        "503-html-unavailable",
        "405-generic",
    ],
)
def test_error_for_response(code: int, body: bytes, expected: type[StoreError]) -> None:
    error = error_for_response(code, body, TARGET)
    assert type(error) is expected
    assert TARGET in str(error)


# KindNotServed is left out: a server reports an unserved kind without naming an object.
@pytest.mark.parametrize(
    "error_class",
    [NotFound, AlreadyExists, Conflict, Gone, Invalid, Forbidden, Unavailable],
    ids=["not-found", "already-exists", "conflict", "gone", "invalid", "forbidden", "unavailable"],
)
def test_the_test_servers_status_reads_back_as_the_same_error(
    error_class: type[StoreError],
) -> None:
    answer = from_store_error(error_class("boom", obj="ns/b"), BUNDLE, "b")
    error = error_for_response(answer.code, json.dumps(answer.status()).encode(), TARGET)
    assert type(error) is error_class


def test_status_message_is_kept() -> None:
    error = error_for_response(409, status(409, "Conflict", "the object has been modified"), TARGET)
    assert "the object has been modified" in str(error)


@pytest.mark.parametrize(
    ("code", "retryable"),
    [(429, True), (500, True), (502, True), (503, True), (504, True), (501, False), (409, False)],
    ids=["429", "500", "502", "503", "504", "501-not-implemented", "409-conflict"],
)
def test_is_retryable_status(code: int, retryable: bool) -> None:
    assert is_retryable_status(code) is retryable
