"""The HTTP endpoints of a long-running command: /metrics on one address, /healthz and /readyz on
another (or both on one, when the addresses are the same).

Addresses are written as Go programs (and Flux's flags) write them: `:8080` listens on every
interface, `127.0.0.1:8080` on one, `[::1]:8080` on an IPv6 one, port 0 picks a free port, and the
address `0` switches the endpoint off. Each server answers on its own daemon threads (one per
request), so a slow scrape never holds up the controllers, and is stopped with the process.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from bundler.observe.health import HealthChecks

log = logging.getLogger(__name__)

DISABLED = "0"
TEXT = "text/plain; charset=utf-8"
MAX_PORT = 65535


@dataclass(frozen=True)
class Answer:
    status: HTTPStatus
    content_type: str
    body: bytes


Route = Callable[[], Answer]


@dataclass(frozen=True)
class Address:
    """Where to listen; host "" means every interface."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_address(text: str) -> Address | None:
    """`[HOST]:PORT`, or None for `0` (switched off); ValueError says what is wrong."""
    if text == DISABLED:
        return None
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > MAX_PORT:
        raise ValueError(f"{text!r} is not HOST:PORT, :PORT or 0 (off)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{text!r}: write an IPv6 host in brackets, as [::1]:8080")
    return Address(host, int(port_text))


def metrics_route(registry: CollectorRegistry) -> Route:
    """Prometheus' text format of everything in `registry`."""
    return lambda: Answer(HTTPStatus.OK, CONTENT_TYPE_LATEST, generate_latest(registry))


def health_route(checks: HealthChecks) -> Route:
    """200 `ok` while every check passes, else 500 with one line per failing check."""

    def answer() -> Answer:
        problems = checks.problems()
        if not problems:
            return Answer(HTTPStatus.OK, TEXT, b"ok\n")
        return Answer(HTTPStatus.INTERNAL_SERVER_ERROR, TEXT, "\n".join(problems).encode() + b"\n")

    return answer


class EndpointServer:
    """Serves `routes` (path -> answer) on `address` once started."""

    def __init__(self, address: Address, routes: Mapping[str, Route]) -> None:
        self.address = address
        self.routes = dict(routes)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Address:
        """Bind (OSError when the address is taken) and serve; returns the bound address."""
        server = _server_for(self.address, _handler_for(self.routes))
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name=f"endpoints-{self.address}", daemon=True
        )
        self._thread.start()
        return self.bound

    @property
    def bound(self) -> Address:
        if self._server is None:
            raise RuntimeError(f"endpoint server for {self.address} is not started")
        port = self._server.server_address[1]
        return Address(self.address.host, int(port))

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join()


def endpoint_servers(
    metrics: Address | None,
    health: Address | None,
    registry: CollectorRegistry,
    liveness: HealthChecks,
    readiness: HealthChecks,
) -> list[EndpointServer]:
    """The servers the two addresses ask for: none, one, or one per address."""
    wanted: dict[Address, dict[str, Route]] = {}
    if metrics is not None:
        wanted.setdefault(metrics, {})["/metrics"] = metrics_route(registry)
    if health is not None:
        routes = wanted.setdefault(health, {})
        routes["/healthz"] = health_route(liveness)
        routes["/readyz"] = health_route(readiness)
    return [EndpointServer(address, routes) for address, routes in wanted.items()]


def _server_for(address: Address, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET

    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

    return Server((address.host, address.port), handler)


def _handler_for(routes: Mapping[str, Route]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path.partition("?")[0])
            if route is None:
                answer = Answer(HTTPStatus.NOT_FOUND, TEXT, b"not found\n")
            else:
                answer = route()
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:
            # Probes every few seconds would drown the controllers' lines.
            log.debug("%s %s", self.address_string(), format % args)

    return Handler
