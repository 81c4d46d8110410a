"""A total deadline for one registry operation, enforced on the sockets themselves.

requests' timeout is per read: a server that sends one byte every few seconds never trips it, in
the headers as in the body. A `Deadline` bounds a whole operation (every request of a tag listing,
a manifest and a blob, a token fetch): while it is entered, every connection a `deadline_session`
opens in that thread is remembered, and when the time is up a timer shuts those sockets down, which
wakes a read blocked in any layer (http.client, urllib3, TLS) with an error. Callers then ask
`expired` to tell "the deadline passed" from an ordinary broken connection.

Each request is also sent with a timeout no longer than what is left, so connecting and each read
give up early too. Connections through a proxy (requests' `ProxyManager`) are not watched; they
keep the per-read timeout only.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_current = threading.local()


class Deadline:
    """`seconds` from entering it; sockets opened meanwhile are shut down when it passes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._ends = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._expired = threading.Event()
        self._timer: threading.Timer | None = None
        self._outer: Deadline | None = None

    @property
    def expired(self) -> bool:
        return self._expired.is_set() or self.remaining() <= 0

    def remaining(self) -> float:
        return max(0.0, self._ends - time.monotonic())

    def timeout(self, per_request: float) -> float:
        """The timeout for the next request: `per_request`, or less when less time is left."""
        return max(0.001, min(per_request, self.remaining()))

    def __enter__(self) -> Deadline:
        self._outer = getattr(_current, "deadline", None)
        _current.deadline = self
        self._timer = threading.Timer(self.remaining(), self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        _current.deadline = self._outer
        with self._lock:
            self._sockets.clear()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
        if self._expired.is_set():
            _shut(sock)

    def _expire(self) -> None:
        self._expired.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by its owner: nothing left to wake
        sock.shutdown(socket.SHUT_RDWR)


def _watch_current(sock: socket.socket | None) -> None:
    deadline: Deadline | None = getattr(_current, "deadline", None)
    if deadline is not None and sock is not None:
        deadline.watch(sock)


class _WatchedHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _watch_current(self.sock)


class _WatchedHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _watch_current(self.sock)


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter whose connections report their sockets to the entered Deadline."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        # urllib3 keeps the pool classes per PoolManager precisely so they can be replaced.
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedHTTPPool,
            "https": _WatchedHTTPSPool,
        }


def watch_session(session: requests.Session) -> requests.Session:
    """`session`, with its connections watched by whichever Deadline is entered."""
    adapter = _WatchedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
