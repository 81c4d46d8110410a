"""Driving `bundler ui` in tests: a dashboard on a kubeconfig, its session, its event stream and
its actions over real HTTP, and the read-only identity whose actions RBAC refuses."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bundler.apiserver import ApiServer
from bundler.core.rbac import PolicyRule
from bundler.kube.store import KubeStore
from bundler.ui.app import Dashboard
from bundler.ui.security import parse_addr
from tests.support.identities import service_account_kubeconfig

# Upper bound of every poll: generous for 2 shared cores, never a timing assertion.
WAIT_SECONDS = 60.0
VIEWER = "bundler-viewer"
VIEWER_USER = f"system:serviceaccount:bundler-system:{VIEWER}"
# Reads every bundler kind, writes nothing: whatever it asks the dashboard to do is refused.
VIEWER_RULES = (
    PolicyRule(
        verbs=("get", "list", "watch"),
        api_groups=("bundler.dev",),
        resources=("bundles", "clusters", "clustergroups", "bundledeployments"),
    ),
)


def viewer_kubeconfig(
    server: ApiServer, directory: Path, rules: tuple[PolicyRule, ...] = VIEWER_RULES
) -> Path:
    return service_account_kubeconfig(server, directory, VIEWER, rules)


@contextlib.contextmanager
def running_dashboard(kubeconfig: Path, **options: Any) -> Iterator[Dashboard]:
    """`bundler ui` in this process on a free loopback port, with `kubeconfig`'s credentials."""
    with KubeStore.from_kubeconfig(kubeconfig) as store:
        dashboard = Dashboard(store, parse_addr("127.0.0.1:0"), context="test", **options)
        dashboard.start()
        try:
            yield dashboard
        finally:
            dashboard.stop()


def wait_until(check: Callable[[], Any], what: str, timeout: float = WAIT_SECONDS) -> Any:
    """`check()`'s first truthy answer; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(
    url: str,
    method: str = "GET",
    path: str = "/",
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One HTTP request to the dashboard at `url`; JSON `body` unless it is bytes."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=WAIT_SECONDS)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    try:
        connection.request(method, path, body=data, headers=headers or {})
        answer = connection.getresponse()
        return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
    finally:
        connection.close()


def get_json(url: str, path: str) -> Any:
    answer = request(url, path=path)
    assert answer.status == 200, f"GET {path}: {answer.status} {answer.body!r}"
    return answer.json()


def post_action(
    url: str, action: str, kind: str, key: str, *, headers: dict[str, str] | None = None
) -> Answer:
    """An action as the page sends it: JSON, same Origin, the session's token (unless
    `headers` replace them)."""
    session = get_json(url, "/api/session")
    namespace, name = key.split("/")
    sent = {
        "Content-Type": "application/json",
        "Origin": url,
        session["csrfHeader"]: session["csrfToken"],
        **(headers or {}),
    }
    body = {"action": action, "kind": kind, "namespace": namespace, "name": name}
    return request(url, "POST", "/api/actions", body, sent)


@dataclass
class EventStream:
    """The dashboard's server-sent events, read in a thread: (event, data) as they arrive."""

    url: str
    events: list[tuple[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        self._socket = socket.create_connection((parts.hostname, parts.port), WAIT_SECONDS)
        self._socket.settimeout(None)
        host = f"{parts.hostname}:{parts.port}"
        self._socket.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        self._lines = self._socket.makefile("rb")
        status = self._lines.readline().decode()
        assert " 200 " in status, status
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        event, data = "message", ""
        with contextlib.suppress(OSError, ValueError):
            for raw in self._lines:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[len("event: ") :]
                elif line.startswith("data: "):
                    data = line[len("data: ") :]
                elif not line and data:
                    with self._lock:
                        self.events.append((event, json.loads(data)))
                    event, data = "message", ""

    def seen(self, event: str) -> list[Any]:
        with self._lock:
            return [data for name, data in self.events if name == event]

    def heard_cell(self, change: list[Any], touched_cluster: str) -> bool:
        """Whether the stream told this cell: in a change, or as a reset touching its cluster
        (after which a page reads the snapshot)."""
        return any(
            change in data.get("cells", [])
            or (
                data.get("reset") and touched_cluster in data.get("touched", {}).get("clusters", [])
            )
            for data in self.seen("fleet")
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        self._thread.join(WAIT_SECONDS)
