"""A scripted registry or Helm repository for tests: a real HTTP server on 127.0.0.1, hostile
when the test wants it to be.

The `hostile` fixture starts one per test and stops it afterwards. A test sets
`answer(path, out)`, which writes whatever it likes to the socket (`out`) for each request path: a
plain answer, a declared size it never sends, a body without end, one byte every 0.2 s, a gzip
bomb. Writes that fail because the client went away end that answer quietly. `seen` lists each
request's path and headers.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Out = io.BufferedIOBase
Answer = Callable[[str, Out], None]
DRIP_SECONDS = 0.2
ENDLESS_CHUNK = b"\0" * 65536


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # the name http.server dispatches to
        server: HostileServer = self.server.owner  # type: ignore[attr-defined]
        server.seen.append((self.path, dict(self.headers)))
        try:
            server.answer(self.path, self.wfile)
            self.wfile.flush()
        except OSError:  # the client gave up: that is what the test wants
            pass
        self.close_connection = True

    # HEAD is answered as GET: the connection closes after each answer, and a client reads no
    # body on HEAD (a test that cares writes only `head`).
    def do_HEAD(self) -> None:  # the name http.server dispatches to
        self.do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class HostileServer:
    """The server; `host` is `127.0.0.1:PORT`; `stop` ends the endless answers."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.answer: Answer = lambda path, out: head(out, 404)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._http.owner = self  # type: ignore[attr-defined]
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._http.server_address[1]}"

    def stop(self) -> None:
        self.stopping.set()
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(10)

    def endless(self, out: Out) -> None:
        while not self.stopping.is_set():
            out.write(ENDLESS_CHUNK)

    def drip(self, out: Out, byte: bytes = b" ") -> None:
        while not self.stopping.wait(DRIP_SECONDS):
            out.write(byte)
            out.flush()


def head(out: Out, status: int = 200, **headers: str) -> None:
    """The status line and headers; `Content_Length` spells `Content-Length`."""
    lines = [f"HTTP/1.1 {status} X", "Connection: close"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    out.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    out.flush()


def whole(out: Out, body: bytes, status: int = 200, **headers: str) -> None:
    head(out, status, Content_Length=str(len(body)), **headers)
    out.write(body)


@functools.cache
def gzip_bomb(decompressed: int) -> bytes:
    """gzip of `decompressed` zero bytes (about 1000 times smaller), made once per size."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as gz:
        for _ in range(decompressed // len(ENDLESS_CHUNK)):
            gz.write(ENDLESS_CHUNK)
    return buffer.getvalue()


def chart_manifest(layer_size: int, layer_digest: str = "sha256:" + "a" * 64) -> bytes:
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.cncf.helm.config.v1+json",
                "digest": "sha256:" + "b" * 64,
                "size": 2,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                    "digest": layer_digest,
                    "size": layer_size,
                }
            ],
        }
    ).encode()


def _serving() -> Iterator[HostileServer]:
    server = HostileServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    yield from _serving()


@pytest.fixture
def elsewhere() -> Iterator[HostileServer]:
    """A second server: where a hostile registry's links lead."""
    yield from _serving()
