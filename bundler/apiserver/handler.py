"""The HTTP side of the test API server: authentication, authorization, routing, faults, JSON
responses.

Every request is counted by API verb, may be answered by an injected fault, and otherwise runs
against the store; every error leaves as a Kubernetes Status object.
"""

from __future__ import annotations

import json
import logging
import socket
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol, cast
from urllib.parse import parse_qs, unquote, urlsplit

from bundler.api.resources import Verb
from bundler.apiserver.admission import admit, authorize_path
from bundler.apiserver.context import ServerContext, Write
from bundler.apiserver.discovery import document, is_discovery_path
from bundler.apiserver.openapi import is_openapi_path, openapi_document
from bundler.apiserver.routing import ResourceRoute, resolve, verb_of
from bundler.apiserver.selectors import parse_equality_selector, parse_field_selector
from bundler.apiserver.statuses import HttpError, from_store_error
from bundler.apiserver.tables import TableEvents, TableView, table_view
from bundler.apiserver.verbs import ApiRequest, execute
from bundler.apiserver.watchstream import WatchStream
from bundler.store.errors import StoreError
from bundler.store.protocol import Obj

log = logging.getLogger(__name__)

# Kubernetes' own default when a watch names no timeoutSeconds is 30-60 minutes.
DEFAULT_WATCH_SECONDS = 1800.0
_TRUE = ("true", "1", "True")
_READS = frozenset({Verb.GET, Verb.LIST, Verb.WATCH})


class _HasContext(Protocol):
    context: ServerContext


class RequestHandler(BaseHTTPRequestHandler):
    """One connection: HTTP/1.1 keep-alive, JSON bodies, chunked watch streams."""

    protocol_version = "HTTP/1.1"
    server_version = "bundler-test-apiserver"
    # Idle keep-alive connections give up after this long, so stray clients cannot pin threads.
    timeout = 120

    def setup(self) -> None:
        super().setup()
        # Headers and body leave in separate writes: without this, Nagle's algorithm and the
        # client's delayed ACK add tens of milliseconds to every keep-alive request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    @property
    def _context(self) -> ServerContext:
        return cast(_HasContext, self.server).context

    def _handle(self) -> None:
        self._started = False
        try:
            self._dispatch(self._read_body())
        except HttpError as error:
            self._answer_error(error)
        except Exception:
            log.exception("test API server failed on %s %s", self.command, self.path)
            self._answer_error(HttpError(500, "internal error in the test API server"))

    def _read_body(self) -> bytes:
        try:
            return self._read_framed_body()
        except ValueError:
            self.close_connection = True  # the framing is lost: the next request cannot be found
            raise HttpError(400, "malformed request body framing") from None

    def _read_framed_body(self) -> bytes:
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks: list[bytes] = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            chunks.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(chunks)

    def _answer_error(self, error: HttpError) -> None:
        if error.code == 403:
            self._context.deny(error.message)
        if self._started:  # a watch stream is under way: the status line is long gone
            self.close_connection = True
            return
        headers = {} if error.retry_after is None else {"Retry-After": str(error.retry_after)}
        self._send_json(error.code, error.status(), headers)

    def _dispatch(self, body: bytes) -> None:
        context = self._context
        user = context.authenticator.authenticate(self.headers.get("Authorization"))
        url = urlsplit(self.path)
        path = unquote(url.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        if self.command == "GET" and (is_discovery_path(path) or is_openapi_path(path)):
            context.count("discovery")
            authorize_path(context.authorizer, user, self.command, path, query)
            host, port = self.connection.getsockname()[:2]
            found = (
                openapi_document(path, context.served())
                if is_openapi_path(path)
                else document(path, context.served(), f"{host}:{port}")
            )
            if found is None:
                raise HttpError(404, "the server could not find the requested resource")
            self._send_json(200, found)
            return
        route = resolve(path, context.served())
        if route is None:
            authorize_path(context.authorizer, user, self.command, path, query)
            raise HttpError(404, "the server could not find the requested resource")
        verb = verb_of(self.command, route, query.get("watch") in _TRUE)
        if verb is None:
            raise HttpError(405, f"{self.command} is not supported on {path}")
        context.count(verb.value)
        if "dryRun" in query:
            raise HttpError(400, "dryRun is not supported by the test API server")
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        request = ApiRequest(route, verb, query, content_type, body)
        admit(context.store, context.authorizer, user, request)
        fault = context.faults.take(verb, route.resource)
        if fault is not None:
            raise fault.error()
        accept = self.headers.get("Accept", "")
        view = table_view(accept, query, route.resource) if verb in _READS else None
        try:
            if verb is Verb.WATCH:
                self._watch(route, query, view)
                return
            code, answer = execute(context.store, context.pager, request)
            if view is not None:
                answer = view.of_answer(answer, _now())
            if verb not in _READS:
                context.record_write(Write.of(user.name, verb, route, answer))
        except StoreError as error:
            raise from_store_error(error, route.resource, route.name) from None
        self._send_json(code, answer)

    def _watch(self, route: ResourceRoute, query: dict[str, str], view: TableView | None) -> None:
        resource_version = query.get("resourceVersion") or None
        if resource_version is not None and not resource_version.isdigit():
            raise HttpError(400, f"invalid resourceVersion {resource_version!r}")
        timeout = query.get("timeoutSeconds") or ""
        if timeout and not timeout.isdigit():
            raise HttpError(400, f"invalid timeoutSeconds {timeout!r}")
        stream = WatchStream(
            self._context,
            self.connection,
            self.wfile,
            route,
            labels=parse_equality_selector(query.get("labelSelector", ""), "labelSelector"),
            fields=parse_field_selector(query.get("fieldSelector", "")),
            timeout=float(timeout) if timeout and int(timeout) > 0 else DEFAULT_WATCH_SECONDS,
            bookmarks=query.get("allowWatchBookmarks") in _TRUE,
            transform=None if view is None else TableEvents(view, _now),
        )
        self.close_connection = True
        stream.run(resource_version, self._begin_stream)

    def _begin_stream(self) -> None:
        self._started = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()

    def _send_json(self, code: int, body: Obj, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _now() -> datetime:
    return datetime.now(UTC)
