"""One watch request, streamed as newline-delimited JSON events with chunked transfer encoding.

Like the real API server: without a resourceVersion (or with "0") the stream starts with an ADDED
event per existing object, then, when bookmarks are allowed, a BOOKMARK annotated
`k8s.io/initial-events-end: "true"` at the list's resourceVersion; a resourceVersion too old for
the store's history answers 200 and a single ERROR event carrying a 410 Status (`too old resource
version: 1 (N)`, N the oldest it still has); the stream ends at `timeoutSeconds`, when the client
goes away, or when the server stops. Unlike it, an idle stream that allows bookmarks gets one every
`bookmark_interval` and one as it times out, carrying the last resourceVersion sent
(docs/apiserver-differences.md). Events reach the stream through a queue, so the store's writers
never wait on a socket. A `transform` changes what each event carries (a Table for kubectl).
"""

from __future__ import annotations

import io
import json
import queue
import select
import socket
import ssl
import time
from collections.abc import Callable

from bundler.apiserver.context import ServerContext
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.selectors import fields_match
from bundler.apiserver.statuses import HttpError
from bundler.store.errors import Gone, StoreError
from bundler.store.protocol import Obj, Watch, WatchEvent

# How often an idle stream checks for a departed client, a stopping server, a due bookmark.
_POLL_SECONDS = 0.2
# The bookmark that ends a watch's initial events (client-go's watch-list reflector waits for it).
INITIAL_EVENTS_END = {"k8s.io/initial-events-end": "true"}

_Item = WatchEvent | Exception | None


class WatchStream:
    """Serves one watch on an HTTP connection whose response headers are not yet sent."""

    def __init__(
        self,
        context: ServerContext,
        connection: socket.socket,
        wfile: io.BufferedIOBase,
        route: ResourceRoute,
        *,
        labels: dict[str, str],
        fields: dict[str, str],
        timeout: float,
        bookmarks: bool,
        transform: Callable[[Obj], Obj] | None = None,
    ) -> None:
        self._context = context
        self._connection = connection
        self._wfile = wfile
        self._route = route
        self._labels = labels
        self._fields = fields
        self._timeout = timeout
        self._bookmarks = bookmarks
        self._transform = transform
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._last_rv = "0"

    def close(self) -> None:
        """End the stream soon; safe from any thread."""
        self._queue.put(None)

    def run(self, resource_version: str | None, begin: Callable[[], None]) -> None:
        """Answer the request: `begin` sends the 200 status line and headers; events follow.

        Returns when the stream has ended for any reason.
        """
        if not self._context.open_stream(self):
            raise HttpError(503, "the server is shutting down")
        try:
            begin()
            watch = self._start(resource_version)
            if watch is not None:
                try:
                    self._pump()
                finally:
                    watch.stop()
            self._end()
        except OSError:
            pass  # the client went away; nothing left to tell it
        finally:
            self._context.close_stream(self)

    def _start(self, resource_version: str | None) -> Watch | None:
        store, res = self._context.store, self._route.resource
        namespace = self._route.namespace
        if resource_version in (None, "", "0"):
            listed = store.list(res, namespace, self._labels)
            watch = store.watch(
                res,
                self._queue.put,
                namespace=namespace,
                labels=self._labels,
                resource_version=listed.resource_version,
                on_error=self._queue.put,
            )
            self._last_rv = listed.resource_version
            for obj in listed.items:
                self._send_object("ADDED", obj)
            # The initial events are the list as of its resourceVersion, whatever theirs are.
            self._last_rv = listed.resource_version
            if self._bookmarks:
                self._send_bookmark(INITIAL_EVENTS_END)
            return watch
        try:
            watch = store.watch(
                res,
                self._queue.put,
                namespace=namespace,
                labels=self._labels,
                resource_version=resource_version,
                on_error=self._queue.put,
            )
        except Gone as gone:
            self._send_error(gone)
            return None
        self._last_rv = resource_version
        return watch

    def _pump(self) -> None:
        deadline = time.monotonic() + self._timeout
        next_bookmark = time.monotonic() + self._context.bookmark_interval
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = self._queue.get(timeout=min(_POLL_SECONDS, left))
            except queue.Empty:
                if self._context.stopping.is_set() or _peer_closed(self._connection):
                    return
                if self._bookmarks and time.monotonic() >= next_bookmark:
                    self._send_bookmark()
                    next_bookmark = time.monotonic() + self._context.bookmark_interval
                continue
            if item is None:
                return
            if isinstance(item, Exception):
                if isinstance(item, StoreError) and item.code == 410:
                    self._send_error(item)
                return
            self._send_object(item.type.value, item.object)
        if self._bookmarks:
            self._send_bookmark()

    def _send_object(self, event_type: str, obj: Obj) -> None:
        if self._fields and not fields_match(obj, self._fields):
            return
        self._last_rv = obj["metadata"].get("resourceVersion", self._last_rv)
        self._send_event(event_type, obj if self._transform is None else self._transform(obj))

    def _send_bookmark(self, annotations: dict[str, str] | None = None) -> None:
        res = self._route.resource
        meta: Obj = {"resourceVersion": self._last_rv}
        if annotations:
            meta = {"annotations": annotations, **meta}
        bookmark = {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}
        self._send_event("BOOKMARK", bookmark)

    def _send_error(self, error: StoreError) -> None:
        self._send_event("ERROR", HttpError(error.code, error.message).status())

    def _send_event(self, event_type: str, obj: Obj) -> None:
        line = json.dumps({"type": event_type, "object": obj}, separators=(",", ":")) + "\n"
        self._chunk(line.encode())

    def _chunk(self, data: bytes) -> None:
        self._wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        self._wfile.flush()

    def _end(self) -> None:
        self._wfile.write(b"0\r\n\r\n")
        self._wfile.flush()


def _peer_closed(connection: socket.socket) -> bool:
    """True when the client has closed its end (a readable socket with nothing to read)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        if readable and isinstance(connection, ssl.SSLSocket):
            # TLS cannot peek; a watch client sends nothing after its request, so whatever
            # arrives is its close_notify or end of stream.
            return True
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True
