"""The dashboard's HTTP server: the page, its JSON, the event stream and the actions.

Built on the standard library's `http.server.ThreadingHTTPServer` rather than a web framework:
the server has a handful of routes, one user, and browsers on the same machine; a thread per
connection is what an event stream needs anyway (each open page holds one), and it adds no
dependency to what `pip install bundler` brings onto an operator's laptop or into the manager's
image. The page itself (static/) is plain HTML, CSS and JavaScript committed as written: no
build step, no npm at install time, nothing fetched from a CDN when it runs.

Every answer carries a Content-Security-Policy allowing only the server's own scripts and
styles (no inline script, nothing from elsewhere), and every request passes the RequestGuard
(bundler.ui.security) first.
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import unquote, urlsplit

from bundler.errors import BundlerError, InvalidInputError
from bundler.store.errors import StoreError
from bundler.store.protocol import Store
from bundler.ui.actions import ActionRequest, perform
from bundler.ui.details import bundle_detail, cluster_detail, deployment_detail
from bundler.ui.events import EventHub, Subscriber
from bundler.ui.fleet_model import FleetModel
from bundler.ui.security import CSRF_HEADER, Address, RequestGuard

log = logging.getLogger(__name__)

# The page's files, by URL path: (file in static/, content type).
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MAX_BODY_BYTES = 16 * 1024
KEEPALIVE_SECONDS = 15.0


@dataclass(frozen=True)
class SessionInfo:
    """What the page is told about the session besides its token."""

    context: str
    read_only: bool
    namespaces: tuple[str, ...] = ()


class UiServer:
    """start() binds and serves in a thread; `url` is set once started; stop() ends it all."""

    def __init__(
        self,
        store: Store,
        model: FleetModel,
        hub: EventHub,
        address: Address,
        info: SessionInfo,
    ) -> None:
        self.store = store
        self.model = model
        self.hub = hub
        self.address = address
        self.info = info
        self.url = ""
        self.guard: RequestGuard | None = None
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        httpd = _HTTPServer(self, self.address)
        port = httpd.server_address[1]
        self.guard = RequestGuard(self.address, port)
        self.url = self.address.url(port)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="ui-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        httpd.shutdown()
        thread.join()
        httpd.server_close()
        self._httpd = self._thread = None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: UiServer, address: Address) -> None:
        self.app = app
        if ":" in address.host:
            self.address_family = socket.AF_INET6
        super().__init__((address.host, address.port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "bundler-ui"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    @property
    def app(self) -> UiServer:
        return self.server.app

    @property
    def guard(self) -> RequestGuard:
        assert self.app.guard is not None
        return self.app.guard

    # -- GET ------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self.guard.host_allowed(self.headers.get("Host")):
            self._json(HTTPStatus.MISDIRECTED_REQUEST, {"error": "unexpected Host header"})
            return
        path = urlsplit(self.path).path
        if path in STATIC:
            self._static(*STATIC[path])
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "text/plain")
        elif path == "/api/session":
            self._json(HTTPStatus.OK, self._session())
        elif path == "/api/fleet":
            self._json(
                HTTPStatus.OK, {**self.app.model.snapshot(), "errors": self.app.hub.errors()}
            )
        elif path == "/api/events":
            self._events()
        else:
            self._detail(path)

    def _session(self) -> dict[str, Any]:
        info = self.app.info
        return {
            "csrfToken": self.guard.token,
            "csrfHeader": CSRF_HEADER,
            "context": info.context,
            "readOnly": info.read_only,
            "namespaces": list(info.namespaces),
        }

    def _detail(self, path: str) -> None:
        parts = [unquote(p) for p in path.split("/")[1:]]
        found: dict[str, Any] | None = None
        match parts:
            case ["api", "bundles", namespace, name]:
                found = bundle_detail(self.app.model, f"{namespace}/{name}")
            case ["api", "bundles", namespace, name, "clusters", cluster_namespace, cluster]:
                found = deployment_detail(
                    self.app.model, f"{namespace}/{name}", f"{cluster_namespace}/{cluster}"
                )
            case ["api", "clusters", namespace, name]:
                found = cluster_detail(self.app.model, f"{namespace}/{name}")
        if found is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"not found: {path}"})
        else:
            self._json(HTTPStatus.OK, found)

    def _events(self) -> None:
        subscriber = self.app.hub.subscribe()
        if subscriber is None:
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "too many open pages"})
            return
        try:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream")
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(b"retry: 2000\n\n")
            self.wfile.flush()
            self._stream(subscriber)
        except OSError:
            pass  # the page went away (a broken pipe, a reset connection)
        finally:
            self.app.hub.unsubscribe(subscriber)
        self.close_connection = True

    def _stream(self, subscriber: Subscriber) -> None:
        while True:
            try:
                message = subscriber.messages.get(timeout=KEEPALIVE_SECONDS)
            except queue.Empty:
                message = b": keepalive\n\n"  # a comment: finds pages that went away
            if message is None:
                return
            self.wfile.write(message)
            self.wfile.flush()

    # -- POST -----------------------------------------------------------------------------------

    def do_POST(self) -> None:
        host, origin = self.headers.get("Host"), self.headers.get("Origin")
        if not self.guard.origin_allowed(origin, host):
            self._json(HTTPStatus.FORBIDDEN, {"error": "cross-origin request refused"})
            return
        if not self.guard.token_valid(self.headers.get(CSRF_HEADER)):
            self._json(HTTPStatus.FORBIDDEN, {"error": "missing or wrong CSRF token"})
            return
        if urlsplit(self.path).path != "/api/actions":
            self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        if self.app.info.read_only:
            self._json(HTTPStatus.FORBIDDEN, {"error": "this dashboard is read-only"})
            return
        try:
            request = ActionRequest.parse(self._body())
            perform(self.app.store, request)
        except StoreError as error:
            # The API server's own words: RBAC's refusal names the user, verb and resource.
            self._json(error.code, {"error": error.message, "reason": type(error).__name__})
            return
        except BundlerError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})
            return
        self._json(HTTPStatus.OK, {"done": request.action.value, "name": request.name})

    def _body(self) -> Any:
        if self.headers.get_content_type() != "application/json":
            raise InvalidInputError("Content-Type must be application/json", obj="action request")
        length = self.headers.get("Content-Length", "")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            raise InvalidInputError(
                f"a body of at most {MAX_BODY_BYTES} bytes, with Content-Length",
                obj="action request",
            )
        try:
            return json.loads(self.rfile.read(int(length)))
        except (ValueError, UnicodeDecodeError):
            raise InvalidInputError("the body is not JSON", obj="action request") from None

    # -- answers --------------------------------------------------------------------------------

    def _static(self, name: str, content_type: str) -> None:
        body = resources.files("bundler.ui").joinpath("static", name).read_bytes()
        self._send(HTTPStatus.OK, body, content_type)

    def _json(self, status: int, data: Any) -> None:
        body = json.dumps(data, separators=(",", ":")).encode()
        self._send(status, body, "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
