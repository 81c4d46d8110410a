"""Request bodies as kube-apiserver reads them: only once the request is authenticated and
authorized, and by a verb that takes one; never more than 3 MiB and a byte (413 past that);
`100 Continue` only when the body is wanted. A body cut short is not executed, and a short one
left unread does not break the connection."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urlsplit

import pytest

from bundler.apiserver.limits import MAX_REQUEST_BODY_BYTES
from bundler.store.protocol import Obj
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    BUNDLES,
    PATIENCE_S,
    SECRETS,
    Http,
    bundle_body,
    rule,
    stream_body,
)

# The body a client declares and never sends whole (the size that took the stand-in 636 MiB).
DECLARED = 600_000_000
# The answer must come before this much of the body was sent: the limit, and what loopback's
# socket buffers hold on both sides (several MiB), with room to spare.
BOUND = 64 * 1024 * 1024
PIECE = b" " * 65536  # whitespace: valid JSON padding, were any of it read
# How the body goes: (its framing headers, what is sent again and again).
FRAMINGS: dict[str, tuple[dict[str, str], bytes]] = {
    "length": ({"Content-Length": str(DECLARED)}, PIECE),
    "chunked": ({"Transfer-Encoding": "chunked"}, b"%X\r\n%s\r\n" % (len(PIECE), PIECE)),
    # A chunk-size line that never ends: Go reads 4096 bytes of one.
    "endless-chunk-size": ({"Transfer-Encoding": "chunked"}, b"1" * 65536),
    "negative-length": ({"Content-Length": "-1"}, PIECE),
    "length-not-a-number": ({"Content-Length": "lots"}, PIECE),
}
TOO_LARGE = {
    "reason": "RequestEntityTooLarge",
    "message": f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}",
}
UNAUTHORIZED = {"reason": "Unauthorized", "message": "Unauthorized"}
FORBIDDEN = {
    "reason": "Forbidden",
    "message": 'secrets is forbidden: User "system:serviceaccount:{ns}:reader" cannot create '
    'resource "secrets" in API group "" in the namespace "{ns}"',
}


@dataclass(frozen=True)
class Case:
    who: str  # "nobody", "stranger" (an unknown token), "reader" (may get secrets), "admin"
    method: str
    path: str
    code: int
    expected: Mapping[str, str | None]  # fields of the JSON answer; {"text": ...} for plain text
    framing: str = "length"
    expect_continue: bool = False


CASES: dict[str, Case] = {
    "no-credentials": Case("nobody", "POST", SECRETS, 401, UNAUTHORIZED),
    "no-credentials-chunked": Case("nobody", "POST", SECRETS, 401, UNAUTHORIZED, "chunked"),
    "no-credentials-awaiting-100-continue": Case(
        "nobody", "POST", SECRETS, 401, UNAUTHORIZED, expect_continue=True
    ),
    "unknown-token": Case("stranger", "POST", SECRETS, 401, UNAUTHORIZED),
    "forbidden": Case("reader", "POST", SECRETS, 403, FORBIDDEN),
    "admin-create": Case("admin", "POST", SECRETS, 413, TOO_LARGE),
    "admin-create-chunked": Case("admin", "POST", SECRETS, 413, TOO_LARGE, "chunked"),
    "admin-create-custom-resource": Case("admin", "POST", BUNDLES, 413, TOO_LARGE),
    "admin-update": Case("admin", "PUT", f"{SECRETS}/s", 413, TOO_LARGE),
    "admin-delete": Case("admin", "DELETE", f"{SECRETS}/s", 413, TOO_LARGE),
    "admin-list-ignores-a-body": Case("admin", "GET", SECRETS, 200, {"kind": "SecretList"}),
    "admin-endless-chunk-size-line": Case(
        "admin",
        "POST",
        SECRETS,
        500,
        {"reason": None, "message": "header line too long"},
        "endless-chunk-size",
    ),
    # Go's server refuses a Content-Length that is none before anything else, credentials too.
    "negative-content-length": Case(
        "nobody", "POST", SECRETS, 400, {"text": "400 Bad Request"}, "negative-length"
    ),
    "content-length-not-a-number": Case(
        "nobody", "POST", SECRETS, 400, {"text": "400 Bad Request"}, "length-not-a-number"
    ),
}


def client_side(backend: Backend, ns: str, who: str) -> tuple[ssl.SSLContext, dict[str, str]]:
    """The TLS context and headers of `who`: only the admin may present the real server's
    client certificate."""
    if who == "admin":
        return backend.ssl_context(), backend.admin_headers()
    context = ssl.create_default_context(cafile=str(backend.ca_file))
    if who == "nobody":
        return context, {}
    if who == "stranger":
        return context, {"Authorization": "Bearer not-a-token"}
    token = backend.user(ns, who, [rule(["get"], [""], ["secrets"])])
    return context, {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_a_huge_body_is_answered_before_it_is_sent(backend: Backend, ns: str, case: Case) -> None:
    context, headers = client_side(backend, ns, case.who)
    framing, frame = FRAMINGS[case.framing]
    headers = {**headers, "Content-Type": "application/json", **framing}
    if case.expect_continue:
        headers["Expect"] = "100-continue"
    path = case.path.replace("{ns}", ns)
    answer = stream_body(backend.url, context, case.method, path, headers, frame, BOUND)
    assert answer.code == case.code, answer
    assert answer.sent < BOUND
    # What the client still sends is not read: the connection cannot carry another request.
    assert answer.headers.get("connection") == "close"
    if "text" in case.expected:
        assert answer.text == case.expected["text"]
        return
    body = answer.json()
    expected = {k: v if v is None else v.replace("{ns}", ns) for k, v in case.expected.items()}
    assert {key: body.get(key) for key in expected} == expected


# Chunked bodies broken in each way Go's chunked reader names, and its message, which
# kube-apiserver answers as any error that is no Status: 500 without a reason.
BROKEN_CHUNKS: dict[str, tuple[bytes, str]] = {
    "size-not-hex": (b"zz\r\n{}\r\n0\r\n\r\n", "invalid byte in chunk length"),
    "size-empty": (b"\r\n{}\r\n0\r\n\r\n", "empty hex number for chunk length"),
    "size-too-large": (b"1" * 17 + b"\r\n{}\r\n", "http chunk length too large"),
    "size-line-ends-with-bare-lf": (b"2\n{}\r\n0\r\n\r\n", "chunked line ends with bare LF"),
    "size-line-with-a-cr-inside": (b"2\r;\r\n{}\r\n0\r\n\r\n", "invalid CR in chunked line"),
    "data-not-followed-by-crlf": (b"2\r\n{}XX0\r\n\r\n", "malformed chunked encoding"),
    "extensions-without-data": (
        b"".join(b"1;" + b"x" * 1000 + b"\r\nx\r\n" for _ in range(20)),
        "chunked encoding contains too much non-data",
    ),
}


@pytest.mark.parametrize(("body", "message"), list(BROKEN_CHUNKS.values()), ids=list(BROKEN_CHUNKS))
def test_a_broken_chunked_body_is_refused_as_go_refuses_it(
    backend: Backend, api: Http, body: bytes, message: str
) -> None:
    headers = {**backend.admin_headers(), "Transfer-Encoding": "chunked"}
    path = api.path(SECRETS)
    answer = stream_body(backend.url, backend.ssl_context(), "POST", path, headers, body, BOUND)
    assert (answer.code, answer.headers.get("connection")) == (500, "close"), answer
    assert answer.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": 500,
    }


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_cut_short_is_not_executed(backend: Backend, api: Http, chunked: bool) -> None:
    whole = json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cut"}})
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(whole) + 50}"
    # Every byte of the object, but not the whole body the request announced.
    body = b"%X\r\n%s\r\n" % (len(whole), whole.encode()) if chunked else whole.encode()
    head = (
        f"POST {api.path(SECRETS)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in backend.admin_headers().items())
        + f"{framing}\r\n\r\n"
    )
    url = urlsplit(backend.url)
    raw = socket.create_connection((url.hostname, url.port), timeout=PATIENCE_S)
    with backend.ssl_context().wrap_socket(raw, server_hostname=url.hostname) as tls:
        tls.sendall(head.encode() + body)
        tls.shutdown(socket.SHUT_WR)  # the client is done: the body ends here
        while tls.recv(65536):  # whatever the server says, until it closes the connection
            pass
    assert api.call("GET", f"{SECRETS}/cut")[0] == 404


def test_a_short_body_left_unread_keeps_the_connection(backend: Backend, ns: str) -> None:
    """A request refused before its body is read does not leave the body to be taken for the
    next request on the connection: both requests get their own 401."""
    url = urlsplit(backend.url)
    context = ssl.create_default_context(cafile=str(backend.ca_file))
    refused = (
        f"POST {SECRETS.replace('{ns}', ns)} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    )
    following = "GET /version HTTP/1.1\r\nHost: x\r\n\r\n"
    raw = socket.create_connection((url.hostname, url.port), timeout=PATIENCE_S)
    with context.wrap_socket(raw, server_hostname=url.hostname) as tls:
        tls.sendall(refused.encode() + b"x" * 1000 + following.encode())
        reader = tls.makefile("rb")
        answers = [read_response(reader) for _ in range(2)]
    assert [(code, body["reason"]) for code, body in answers] == [(401, "Unauthorized")] * 2


def read_response(reader: BinaryIO) -> tuple[int, Obj]:
    """One HTTP/1.1 response with a Content-Length: its code and JSON body."""
    status = reader.readline()
    headers: dict[str, str] = {}
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = reader.read(int(headers.get("content-length", "0")))
    return int(status.split()[1]), json.loads(body) if body else {}


def test_a_body_at_the_limit_is_read(api: Http) -> None:
    body = json.dumps(bundle_body("edge"))
    padded = body[:-1] + " " * (MAX_REQUEST_BODY_BYTES - len(body)) + "}"
    assert len(padded) == MAX_REQUEST_BODY_BYTES
    assert api.send("POST", BUNDLES, raw=padded).status_code == 201
