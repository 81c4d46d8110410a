"""The HTTP side of the test API server: authentication, authorization, routing, faults, JSON
responses.

Every request is counted by API verb, may be answered by an injected fault, and otherwise runs
against the store; every error leaves as a Kubernetes Status object, and every answer carries the
request's warnings as Warning headers. Custom resources are served as decoded from storage
(bundler.apiserver.decoding), to reads and watches alike. A request's body is read only once the
request is authenticated and authorized, and only by a verb that takes one, within the body limit
(bundler.apiserver.bodies); a connection whose body was left unread closes after the answer. A
client that goes away (mid-handshake, mid-request, mid-body, mid-answer, during a watch) ends its
connection with one debug line, never a traceback: only the server's own failures are errors.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol, cast
from urllib.parse import parse_qs, unquote, urlsplit

from bundler.api.resources import Verb
from bundler.apiserver import protobuf
from bundler.apiserver.admission import Admitted, admit, authorize_path, authorize_request
from bundler.apiserver.authn import UserInfo
from bundler.apiserver.bodies import ClientGoneError, RequestBody
from bundler.apiserver.context import ServerContext, Write
from bundler.apiserver.decoding import from_storage
from bundler.apiserver.discovery import document, is_discovery_path
from bundler.apiserver.openapi import is_openapi_path, openapi_document
from bundler.apiserver.protobuf import PROTOBUF
from bundler.apiserver.response_warnings import Warnings
from bundler.apiserver.routing import ResourceRoute, not_found, resolve, verb_of
from bundler.apiserver.selectors import parse_equality_selector, parse_field_selector
from bundler.apiserver.statuses import HttpError, from_store_error
from bundler.apiserver.structural import Structural
from bundler.apiserver.tables import TableEvents, TableView, table_view
from bundler.apiserver.verbs import ApiRequest, execute
from bundler.apiserver.watchstream import WatchStream
from bundler.store.errors import Conflict, StoreError
from bundler.store.mergepatch import json_copy
from bundler.store.protocol import Obj

log = logging.getLogger(__name__)

# Kubernetes' own default when a watch names no timeoutSeconds is 30-60 minutes.
DEFAULT_WATCH_SECONDS = 1800.0
_TRUE = ("true", "1", "True")
_READS = frozenset({Verb.GET, Verb.LIST, Verb.WATCH})
# The verbs whose kube-apiserver handlers read a request body (writes, and delete options).
_WITH_BODY = frozenset({Verb.CREATE, Verb.UPDATE, Verb.PATCH, Verb.DELETE, Verb.DELETE_COLLECTION})
# How long a connection closed with a body left unread still drops what arrives, so the client
# reads the answer before a reset can destroy it (Go's server waits as long: rstAvoidanceDelay).
LINGER_SECONDS = 0.5
# Admissions of one patch whose object keeps changing under it, before its 409 goes out.
_PATCH_ATTEMPTS = 20


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
        self._body: RequestBody | None = None
        # Headers and body leave in separate writes: without this, Nagle's algorithm and the
        # client's delayed ACK add tens of milliseconds to every keep-alive request.
        with contextlib.suppress(OSError):  # a client gone already is found by the first read
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        try:
            super().handle()
        except OSError as error:
            # What http.server reads and writes itself: the TLS handshake, a request line or
            # headers, a keep-alive connection idle or reset. (Answers go through _send, whose
            # failures are ClientGoneError.)
            log.debug("connection from %s ended: %r", self.address_string(), error)

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

    def handle_expect_100(self) -> bool:
        # 100 Continue goes out when the body is read (RequestBody), not with the headers: a
        # request refused before that never has its client send the body.
        return True

    def finish(self) -> None:
        super().finish()
        if self._body is not None and self._body.left_unread:
            self._linger()

    def _linger(self) -> None:
        """Close our side, then drop what the client still sends, until it closes or
        LINGER_SECONDS pass: closing with unread data would reset the connection at once."""
        connection = self.connection
        deadline = time.monotonic() + LINGER_SECONDS
        try:
            connection.shutdown(socket.SHUT_WR)
            while (left := deadline - time.monotonic()) > 0:
                readable, _, _ = select.select([connection], [], [], left)
                # After shutdown() a TLS socket reads its raw bytes: dropped all the same.
                if not readable or not connection.recv(65536):
                    return
        except OSError:
            return  # the client is gone already

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    @property
    def _context(self) -> ServerContext:
        return cast(_HasContext, self.server).context

    def _handle(self) -> None:
        self._started = False
        self._warnings = Warnings()
        body = self._body = RequestBody(self.rfile, self.headers, self._send_continue)
        try:
            self._respond(body)
        except ClientGoneError as gone:
            self.close_connection = True
            log.debug("%s %s: the client went away: %s", self.command, self.path, gone)

    def _respond(self, body: RequestBody) -> None:
        try:
            self._dispatch(body)
        except HttpError as error:
            self._answer_error(error)
        except ClientGoneError:
            raise
        except Exception:
            log.exception("test API server failed on %s %s", self.command, self.path)
            self._answer_error(HttpError(500, "internal error in the test API server"))

    def _send_continue(self) -> None:
        if self.request_version == "HTTP/1.0":
            return  # an HTTP/1.0 client knows no interim answers and sends its body anyway
        try:
            self.send_response_only(100)
            self.end_headers()
        except OSError as error:
            raise ClientGoneError(f"sending 100 Continue: {error}") from None

    def _answer_error(self, error: HttpError) -> None:
        if error.code == 403:
            self._context.deny(error.message)
        if self._started:  # a watch stream is under way: the status line is long gone
            self.close_connection = True
            return
        if error.plain:
            self._send_text(error.code, error.message)
            return
        headers = {} if error.retry_after is None else {"Retry-After": str(error.retry_after)}
        self._send_json(error.code, error.status(), headers)

    def _dispatch(self, request_body: RequestBody) -> None:
        context = self._context
        request_body.check_framing()  # Go's server refuses it before any handler runs
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
                # kube-apiserver's OpenAPI handler answers an unknown document with no body.
                raise HttpError(404, "", plain=True) if is_openapi_path(path) else not_found(path)
            self._send_json(200, found)
            return
        route = resolve(path, context.served())
        if route is None:
            authorize_path(context.authorizer, user, self.command, path, query)
            raise not_found(path)
        try:
            verb = verb_of(self.command, route, query.get("watch") in _TRUE)
        except HttpError:
            # Authorization comes before routing in kube-apiserver's handler chain.
            authorize_path(context.authorizer, user, self.command, path, query)
            raise
        context.count(verb.value)
        if "dryRun" in query:
            raise HttpError(400, "dryRun is not supported by the test API server")
        authorize_request(context.authorizer, user, route, verb, query)
        body = request_body.read() if verb in _WITH_BODY else b""
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type == PROTOBUF:
            body, content_type = protobuf.as_json(route, verb, body), "application/json"
        request = ApiRequest(route, verb, query, content_type, body)
        admitted = self._admit(user, request)
        fault = context.faults.take(verb, route.resource)
        if fault is not None:
            raise fault.error()
        accept = self.headers.get("Accept", "")
        view = table_view(accept, query, route.resource) if verb in _READS else None
        schema = context.schemas.of(route.resource)
        try:
            if verb is Verb.WATCH:
                self._watch(route, query, _watch_transform(schema, view))
                return
            code, answer = self._execute(user, request, admitted)
            if schema is not None and verb in _READS:
                answer = _decoded(answer, schema)
            if view is not None:
                answer = view.of_answer(answer, _now())
            if verb not in _READS:
                context.record_write(Write.of(user.name, verb, route, answer))
        except StoreError as error:
            creating = verb is Verb.CREATE
            name = _named(admitted.request) if creating else route.name
            raise from_store_error(
                error, route.resource, name, namespace=route.namespace, creating=creating
            ) from None
        self._send_json(code, answer)

    def _admit(self, user: UserInfo, request: ApiRequest) -> Admitted:
        context = self._context
        return admit(
            context.store, context.authorizer, context.schemas, user, request, self._warnings
        )

    def _execute(self, user: UserInfo, request: ApiRequest, admitted: Admitted) -> tuple[int, Obj]:
        """Run the admitted request; a guarded patch is admitted again while its object changes."""
        context = self._context
        attempts = 1
        while True:
            try:
                return execute(context.store, context.pager, admitted.request)
            except Conflict:
                if not admitted.guarded or attempts == _PATCH_ATTEMPTS:
                    raise
            attempts += 1
            admitted = self._admit(user, request)

    def _watch(
        self,
        route: ResourceRoute,
        query: dict[str, str],
        transform: Callable[[Obj], Obj] | None,
    ) -> None:
        resource_version = query.get("resourceVersion") or None
        if resource_version is not None and not resource_version.isdigit():
            # kube-apiserver's watch cache fails to parse it and answers as it does any error
            # that is no Status: 500, without a reason.
            raise HttpError(
                500,
                f'resourceVersion: Invalid value: "{resource_version}": strconv.ParseUint: '
                f'parsing "{resource_version}": invalid syntax',
                reason="",
            )
        timeout = query.get("timeoutSeconds") or ""
        if timeout and not _is_int(timeout):
            raise HttpError(400, f'strconv.ParseInt: parsing "{timeout}": invalid syntax')
        stream = WatchStream(
            self._context,
            self.connection,
            self.wfile,
            route,
            labels=parse_equality_selector(query.get("labelSelector", ""), "labelSelector"),
            fields=parse_field_selector(query.get("fieldSelector", "")),
            timeout=float(timeout) if timeout and int(timeout) > 0 else DEFAULT_WATCH_SECONDS,
            bookmarks=query.get("allowWatchBookmarks") in _TRUE,
            transform=transform,
        )
        self.close_connection = True
        stream.run(resource_version, self._begin_stream)

    def _begin_stream(self) -> None:
        self._started = True
        self._settle()  # the stream's connection closes when it ends, whatever is left
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()

    def _settle(self) -> bool:
        """Whether the connection can carry another request after this answer."""
        return self._body is None or self._body.settle()

    def _send_text(self, code: int, text: str) -> None:
        self._send(code, text.encode(), "text/plain; charset=utf-8" if text else None, {})

    def _send_json(self, code: int, body: Obj, headers: dict[str, str] | None = None) -> None:
        self._send(
            code, json.dumps(body, separators=(",", ":")).encode(), "application/json", headers
        )

    def _send(
        self, code: int, data: bytes, content_type: str | None, headers: dict[str, str] | None
    ) -> None:
        keep_alive = self._settle()
        self.send_response(code)
        if not keep_alive:
            self.send_header("Connection", "close")  # http.server then closes after the answer
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        for warning in self._warnings.headers():
            # http.server writes headers as latin-1; these bytes are the UTF-8 Go would send.
            self.send_header("Warning", warning.encode().decode("latin-1"))
        try:
            self.end_headers()
            self.wfile.write(data)
        except OSError as error:
            raise ClientGoneError(f"sending the answer: {error}") from None


def _named(request: ApiRequest) -> str | None:
    """The name the object of a create names (its path names none that counts)."""
    body = request.decoded
    if body is None:
        try:
            body = json.loads(request.body or b"null")
        except (ValueError, UnicodeDecodeError):
            return None
    meta = body.get("metadata") if isinstance(body, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


def _is_int(text: str) -> bool:
    try:
        int(text, 10)
    except ValueError:
        return False
    return True


def _decoded(answer: Obj, schema: Structural) -> Obj:
    """A read's answer (an object or a list) with its objects as decoded from storage."""
    if "items" in answer and answer.get("kind", "").endswith("List"):
        answer["items"] = [from_storage(item, schema) for item in answer["items"]]
        return answer
    return from_storage(answer, schema)


def _watch_transform(
    schema: Structural | None, view: TableView | None
) -> Callable[[Obj], Obj] | None:
    """What a watch sends for each stored object: decoded, then as a Table for kubectl."""
    table = None if view is None else TableEvents(view, _now)
    if schema is None:
        return table

    def transform(stored: Obj) -> Obj:
        decoded = from_storage(json_copy(stored), schema)
        return decoded if table is None else table(decoded)

    return transform


def _now() -> datetime:
    return datetime.now(UTC)
