"""The threaded HTTP server under the test API server, which can close its own connections.

Each connection gets a thread. Stopping shuts every open connection down so that idle keep-alive
connections and watch streams end at once, and `server_close()` can join all their threads. What
a connection's thread fails on goes to the log, not to stderr as socketserver prints it: a
connection error (the client went away) as one debug line, anything else as an error.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from bundler.apiserver.context import ServerContext
from bundler.apiserver.handler import RequestHandler

log = logging.getLogger(__name__)


class KubeHTTPServer(ThreadingHTTPServer):
    """Listens on 127.0.0.1 at an ephemeral port; `context` is what handlers work against."""

    daemon_threads = False
    block_on_close = True

    def __init__(
        self, context: ServerContext, tls: ssl.SSLContext | None = None, port: int = 0
    ) -> None:
        self.context = context
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), RequestHandler)
        if tls is not None:
            # The handshake happens on the connection's first read, in its own thread, so a
            # slow client cannot hold up accepting the others.
            self.socket = tls.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def open_connections(self) -> int:
        """Connections whose threads have not finished with them yet."""
        with self._connections_lock:
            return len(self._connections)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            log.debug("connection from %s failed: %r", client_address, error)
            return
        log.exception("test API server failed on a connection from %s", client_address)

    def close_connections(self) -> None:
        """Shut down every open connection; their handler threads then finish on their own."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the peer
                connection.shutdown(socket.SHUT_RDWR)
