"""Request bodies, read as kube-apiserver reads them: late, and never more than the limit.

Only a handler that takes a body reads it (create, update, patch, delete, deletecollection), after
the request was authenticated and authorized, so a request without credentials is answered 401
with its body unread, whatever its size. It reads at most the limit and one byte more (Go's
`limitedReadBody`): a body over the limit is 413 `Request entity too large: limit is N` with the
rest unread, whether it is framed by Content-Length or chunked. `Expect: 100-continue` is answered
only when the body is read, as Go's server does, so a client that waits for it never sends a body
a 401 or 403 refuses.

What a request leaves unread when its answer goes out decides the connection: a Content-Length
remainder of at most DRAIN_LIMIT is read and dropped, so the connection carries the next request
(Go's net/http drains as much after a handler); anything more, a chunked body, or a body held
back for 100-continue closes the connection after the answer, and the caller lingers before the
close (`left_unread`). A body cut short by the client (end of stream, reset, timeout) is
`ClientGoneError`: nothing of it is executed and nothing is answered. Framing errors are answered
as kube-apiserver answers them: a Content-Length that is no length with Go's plain-text 400 before
anything else, a broken chunked body with Go's chunked reader's message in a 500 (a chunk-size
line is read up to 4096 bytes, as there).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from email.message import Message

from bundler.apiserver.limits import MAX_REQUEST_BODY_BYTES, request_entity_too_large
from bundler.apiserver.statuses import HttpError

# What Go's net/http reads and drops of a body its handler left, to keep the connection alive.
DRAIN_LIMIT = 256 * 1024
# Go's chunked reader refuses a chunk-size line longer than this.
MAX_CHUNK_LINE = 4096
# Trailer lines after a chunked body; more is no HTTP client's doing.
MAX_TRAILERS = 100
_READ_SIZE = 64 * 1024
_HEX = re.compile(rb"[0-9a-fA-F]+")


class ClientGoneError(Exception):
    """The client closed or broke its connection mid-request: nothing more can be told to it."""


class RequestBody:
    """The body of one request on `rfile`, framed as `headers` say; read() when it is wanted.

    `send_continue` sends the interim `100 Continue`, for a client that asked for one.
    """

    def __init__(
        self,
        rfile: io.BufferedIOBase,
        headers: Message,
        send_continue: Callable[[], None],
        limit: int = MAX_REQUEST_BODY_BYTES,
    ) -> None:
        self._rfile = rfile
        self._limit = limit
        self._send_continue = send_continue
        self._chunked = "chunked" in (headers.get("Transfer-Encoding") or "").lower()
        self._length = (headers.get("Content-Length") or "0").strip()
        self._continue = (headers.get("Expect") or "").lower() == "100-continue"
        self._remaining = 0 if self._chunked else _parsed_length(self._length)
        # Nothing to read: no body, or a Content-Length of 0 (a bad one is found by read()).
        self._finished = not self._chunked and self._remaining == 0
        self._body: bytes | None = None
        self.left_unread = False

    def check_framing(self) -> None:
        """Refuse a Content-Length that is no length, as Go's server does before any handler:
        400 `400 Bad Request` as plain text (and settle() closes the connection)."""
        if not self._chunked and self._remaining < 0:
            raise HttpError(400, "400 Bad Request", plain=True)

    def read(self) -> bytes:
        """The whole body (once; again the same), or the HttpError of a body too large or
        framed wrongly, or ClientGoneError."""
        if self._body is not None:
            return self._body
        self.check_framing()
        if self._continue and not self._finished:  # no interim answer for an empty body
            self._continue = False
            self._send_continue()
        try:
            body = self._read_chunked() if self._chunked else self._read_length()
        except OSError as error:
            raise ClientGoneError(f"reading the request body: {error}") from None
        self._body = body
        return body

    def settle(self) -> bool:
        """Before the answer goes out: whether the connection can take another request after it.

        A short remainder the client is sending anyway is dropped; otherwise what is left unread
        stays unread (`left_unread`) and the connection must close after the answer.
        """
        if self._finished:
            return True
        if self._chunked or self._continue or not 0 <= self._remaining <= DRAIN_LIMIT:
            self.left_unread = True
            return False
        try:
            while self._remaining:
                self._remaining -= len(self._some(min(self._remaining, _READ_SIZE)))
        except OSError as error:
            raise ClientGoneError(f"draining the request body: {error}") from None
        self._finished = True
        return True

    def _read_length(self) -> bytes:
        wanted = min(self._remaining, self._limit + 1)
        parts: list[bytes] = []
        while wanted:
            part = self._some(min(wanted, _READ_SIZE))
            parts.append(part)
            wanted -= len(part)
            self._remaining -= len(part)
        body = b"".join(parts)
        if len(body) > self._limit:
            raise request_entity_too_large(self._limit)
        self._finished = True
        return body

    def _read_chunked(self) -> bytes:
        """The chunks' data, read as Go's chunked reader (net/http/internal/chunked.go) reads
        them, with its errors, which kube-apiserver answers as any error that is no Status: 500
        without a reason. Whatever stops it leaves the connection unusable: settle() closes it."""
        parts: list[bytes] = []
        total = 0
        excess = 0  # bytes of chunk-size lines beyond what their data pays for, as Go counts
        while True:
            line = self._chunk_line()
            size = _chunk_size(line)
            excess = max(excess + len(line) + 2 - 16 - 2 * size, 0)
            if excess > 16 * 1024:
                raise _chunk_error("chunked encoding contains too much non-data")
            if not size:
                break
            take = min(size, self._limit + 1 - total)
            parts.append(self._exactly(take))
            total += take
            if total > self._limit:
                raise request_entity_too_large(self._limit)
            if self._exactly(2) != b"\r\n":
                raise _chunk_error("malformed chunked encoding")
        for _ in range(MAX_TRAILERS):
            if self._line() in (b"\r\n", b"\n"):
                self._finished = True
                return b"".join(parts)
        raise _chunk_error("header line too long")

    def _chunk_line(self) -> bytes:
        """A chunk-size line without its CRLF."""
        line = self._line()
        if b"\r" not in line:
            raise _chunk_error("chunked line ends with bare LF")
        if line.index(b"\r") != len(line) - 2:
            raise _chunk_error("invalid CR in chunked line")
        return line[:-2]

    def _line(self) -> bytes:
        line = self._rfile.readline(MAX_CHUNK_LINE + 1)
        if len(line) > MAX_CHUNK_LINE:
            raise _chunk_error("header line too long")
        if not line.endswith(b"\n"):
            raise ClientGoneError("the request body ended early")
        return line

    def _exactly(self, size: int) -> bytes:
        parts: list[bytes] = []
        while size:
            part = self._some(min(size, _READ_SIZE))
            parts.append(part)
            size -= len(part)
        return b"".join(parts)

    def _some(self, size: int) -> bytes:
        """Up to `size` bytes, at least one; the stream ending first is ClientGoneError."""
        part = self._rfile.read1(size)
        if not part:
            raise ClientGoneError("the request body ended early")
        return part


def _parsed_length(text: str) -> int:
    """The Content-Length, or -1 when it is no length at all."""
    return int(text) if text.isascii() and text.isdigit() else -1


def _chunk_size(line: bytes) -> int:
    """The size a chunk-size line (without its CRLF) gives: trailing blanks, then any
    extension left out, and nothing else allowed, as in Go."""
    size = line.rstrip(b" \t").split(b";")[0]
    if not size:
        raise _chunk_error("empty hex number for chunk length")
    if not _HEX.fullmatch(size):
        raise _chunk_error("invalid byte in chunk length")
    if len(size) > 16:
        raise _chunk_error("http chunk length too large")
    return int(size, 16)


def _chunk_error(message: str) -> HttpError:
    return HttpError(500, message, reason="")
