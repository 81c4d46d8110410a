"""A client that goes away, at any point of a request, costs the stand-in one debug line: no
traceback on stderr (socketserver prints one for any exception out of a connection's thread) and
no error in the log, and the server keeps serving. `bundler dev` runs this server in front of
kubectl, whose Ctrl-C, timeouts and retries close connections at any moment."""

from __future__ import annotations

import base64
import logging
import socket
import struct
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from bundler.api.resources import SECRET
from bundler.apiserver import ApiServer
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import SECRETS, Http, eventually

# SO_LINGER on, zero seconds: close() resets the connection instead of ending it.
RESET = struct.pack("ii", 1, 0)

pytestmark = pytest.mark.stand_in_only(
    "reads the stand-in's stderr and log; kube-apiserver logs to a file of its own"
)


class Client:
    """A raw connection to the server, as the admin, that can go away at any moment."""

    def __init__(self, backend: Backend, ns: str, *, tls: bool = True) -> None:
        url = urlsplit(backend.url)
        raw = socket.create_connection((url.hostname, url.port), timeout=10)
        self.ns = ns
        self.sock: socket.socket = (
            backend.ssl_context().wrap_socket(raw, server_hostname=url.hostname) if tls else raw
        )
        self.auth = "".join(f"{k}: {v}\r\n" for k, v in backend.admin_headers().items())

    def send(self, method: str, path: str, extra: str = "", body: bytes = b"") -> None:
        path = path.replace("{ns}", self.ns)
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n{self.auth}{extra}\r\n"
        self.sock.sendall(head.encode() + body)

    def reset(self) -> None:
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
        self.sock.close()


def during_the_handshake(backend: Backend, ns: str, server: ApiServer) -> None:
    url = urlsplit(backend.url)
    socket.create_connection((url.hostname, url.port), timeout=10).close()


def speaking_plain_http(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns, tls=False)
    client.send("GET", "/version")
    client.sock.close()


def mid_headers(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns)
    client.sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n")
    client.sock.close()


def mid_body(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns)
    client.send("POST", SECRETS, "Content-Length: 1000\r\n", b'{"metadata":')
    client.sock.close()


def mid_chunked_body(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns)
    client.send("POST", SECRETS, "Transfer-Encoding: chunked\r\n", b"400\r\n{")
    client.reset()


def before_the_answer(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns)
    client.send("GET", SECRETS)
    client.reset()


def mid_answer(backend: Backend, ns: str, server: ApiServer) -> None:
    """An answer larger than both sockets buffer: writing it fails once the client is gone."""
    padding = base64.b64encode(b"x" * 500_000).decode()
    for index in range(40):
        secret = {"metadata": {"name": f"big-{index}", "namespace": ns}, "data": {"v": padding}}
        server.store.create(SECRET, secret)
    client = Client(backend, ns)
    client.send("GET", SECRETS)
    assert client.sock.recv(1) == b"H"  # the answer is under way
    client.reset()


def while_idle(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns)
    client.send("GET", "/version")
    assert client.sock.recv(65536).startswith(b"HTTP/1.1 200")
    client.reset()


def during_a_watch(backend: Backend, ns: str, server: ApiServer) -> None:
    client = Client(backend, ns)
    client.send("GET", f"{SECRETS}?watch=true")
    assert client.sock.recv(65536).startswith(b"HTTP/1.1 200")
    client.reset()
    admin = backend.admin(ns)
    for index in range(5):  # events the stream can no longer deliver
        admin.call("POST", SECRETS, {"metadata": {"name": f"s{index}"}})
    admin.close()


GOING_AWAY: dict[str, Callable[[Backend, str, ApiServer], None]] = {
    "during-the-tls-handshake": during_the_handshake,
    "speaking-plain-http-to-https": speaking_plain_http,
    "mid-headers": mid_headers,
    "mid-body": mid_body,
    "mid-chunked-body": mid_chunked_body,
    "before-the-answer": before_the_answer,
    "mid-answer": mid_answer,
    "reset-while-idle": while_idle,
    "during-a-watch": during_a_watch,
}


@pytest.mark.parametrize("go_away", list(GOING_AWAY.values()), ids=list(GOING_AWAY))
def test_a_client_going_away_leaves_no_traceback(
    backend: Backend,
    server: ApiServer,
    api: Http,
    go_away: Callable[[Backend, str, ApiServer], None],
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    go_away(backend, api.namespace, server)
    eventually(lambda: server.open_connections() == 0 or None, "the connection to be done with")
    stderr = capfd.readouterr().err
    assert "Traceback" not in stderr, stderr
    failures = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not failures, [r.getMessage() for r in failures]
    assert api.call("GET", "/version")[0] == 200
