"""What the API-server contract tests share: the paths and objects they use, `Http` (JSON over
HTTPS to one server, in one test namespace), `WatchReader` (a watch stream read line by line) and
`stream_body` (a request whose body is sent until the answer comes, never whole).

Paths are templates: `{ns}` stands for the test's own namespace and is filled in by the client
that sends them, so one table of cases serves every test and both backends
(tests.support.apiserver.backends).
"""

from __future__ import annotations

import base64
import http.client
import json
import select
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests

from bundler.api.resources import Resource
from bundler.store.protocol import Obj

NS = "{ns}"
BUNDLES = f"/apis/bundler.dev/v1alpha1/namespaces/{NS}/bundles"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"
ACCOUNTS = f"/api/v1/namespaces/{NS}/serviceaccounts"
ROLES = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles"
ROLE_BINDINGS = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings"
CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
CLUSTER_ROLE_BINDINGS = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
MERGE = {"Content-Type": "application/merge-patch+json"}
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGET = Resource("example.com", "v1", "Widget", "widgets", status_subresource=True)
WIDGETS = f"/apis/example.com/v1/namespaces/{NS}/widgets"
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
# How long a test waits for what a real cluster does asynchronously (its controllers, its caches).
PATIENCE_S = 30.0
T = TypeVar("T")
WIDGET_SCHEMA: Obj = {
    "type": "object",
    "required": ["spec"],
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number", "maximum": 1, "exclusiveMaximum": True},
                "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Slow"},
                "name": {"type": "string", "minLength": 3, "maxLength": 8, "pattern": "^[a-z]+$"},
                "tags": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 2,
                    "items": {"type": "string"},
                },
                "since": {"type": "string", "format": "date-time"},
                "host": {"type": "string", "format": "k8s-short-name"},
                "replicas": {"x-kubernetes-int-or-string": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "note": {"type": "string", "nullable": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer", "default": 80},
                        },
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "phase": {"type": "string", "enum": ["Ready", "Failed"]},
                "count": {"type": "integer"},
            },
        },
    },
}


# A merge patch that changes a Bundle's spec (fields its schema does not know would be pruned).
SPEC_CHANGE = {"spec": {"namespace": "elsewhere"}}


def bundle_body(name: str, **labels: str) -> Obj:
    """A Bundle as small as bundler's CRD accepts (the server validates Bundles against it)."""
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "labels": labels},
        "spec": {"helm": {"chart": "podinfo"}},
    }


def widget(name: str = "w", /, **spec: Any) -> Obj:
    """A Widget of size 1 with `spec` on top."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": 1, **spec},
    }


def widget_crd(schema: Obj = WIDGET_SCHEMA) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def rule(verbs: list[str], groups: list[str], resources: list[str], **more: Any) -> Obj:
    """One PolicyRule of a Role or ClusterRole."""
    return {"verbs": verbs, "apiGroups": groups, "resources": resources, **more}


def names_of(listed: Obj) -> list[str]:
    return [item["metadata"]["name"] for item in listed["items"]]


def eventually(probe: Callable[[], T | None], what: str, timeout: float = PATIENCE_S) -> T:
    """What `probe` returns once it returns something other than None; fails after `timeout`.

    A real cluster does some things after it answered (its controllers fill token Secrets and
    finish deletions, its authenticator reads through caches); the stand-in does them at once,
    so there the first probe succeeds."""
    deadline = time.monotonic() + timeout
    while (found := probe()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)
    return found


class Http:
    """JSON over HTTP(S) to one server as one user, in one test namespace: `{ns}` in a path is
    that namespace. Every call returns (status code, decoded body)."""

    def __init__(
        self,
        base: str,
        *,
        namespace: str = "",
        token: str | None = None,
        cert: tuple[str, str] | None = None,
        verify: str | bool = True,
    ) -> None:
        self.base = base
        self.namespace = namespace
        self.session = requests.Session()
        # REQUESTS_CA_BUNDLE from the environment would replace `verify`; nothing here goes
        # through a proxy either: every server is on loopback.
        self.session.trust_env = False
        self.session.verify = verify
        if cert is not None:
            self.session.cert = cert
        if token is not None:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def path(self, template: str) -> str:
        return template.replace(NS, self.namespace)

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Obj]:
        response = self.send(method, path, body, **kwargs)
        return response.status_code, response.json()

    def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: str | bytes | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        """The whole response to `body` as JSON, or to the `raw` text or bytes as they are."""
        data = raw if raw is not None else None if body is None else json.dumps(body)
        url = self.base + self.path(path)
        return self.session.request(method, url, data=data, timeout=30, **kwargs)

    def close(self) -> None:
        self.session.close()


PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}


def pb_field(number: int, value: int | bytes | str) -> bytes:
    """One Protobuf field: a varint for an int, length-delimited bytes for bytes or text."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def protobuf_object(api_version: str, kind: str, raw: bytes) -> bytes:
    """A body in Kubernetes' Protobuf encoding: the magic, then runtime.Unknown holding the
    object's TypeMeta and its message `raw`."""
    type_meta = pb_field(1, api_version) + pb_field(2, kind)
    return b"k8s\x00" + pb_field(1, type_meta) + pb_field(2, raw)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def secret_token(api: Http, name: str) -> str | None:
    """The token a token controller put into Secret `name` of the test namespace, if it did."""
    code, secret = api.call("GET", f"{SECRETS}/{name}")
    encoded = (secret.get("data") or {}).get("token") if code == 200 else None
    return base64.b64decode(encoded).decode() if encoded else None


class WatchReader:
    """Reads a watch response line by line, with a socket timeout so a test can never hang."""

    def __init__(
        self,
        base: str,
        path: str,
        headers: dict[str, str],
        context: ssl.SSLContext | None,
        accept: str | None = None,
    ) -> None:
        url = urlsplit(base)
        host, port = url.hostname or "", url.port
        self.connection = (
            http.client.HTTPSConnection(host, port, timeout=30, context=context)
            if url.scheme == "https"
            else http.client.HTTPConnection(host, port, timeout=30)
        )
        sent = {**headers, **({"Accept": accept} if accept else {})}
        self.connection.request("GET", path, headers=sent)
        self.response = self.connection.getresponse()

    def next(self) -> dict[str, Any] | None:
        """The next event, or None when the stream has ended."""
        line = self.response.readline()
        return json.loads(line) if line else None

    def events(self, count: int) -> list[tuple[str, str]]:
        return [_summary(self.next()) for _ in range(count)]

    def rest(self) -> list[tuple[str, str]]:
        """Every remaining event until the server ends the stream."""
        found: list[tuple[str, str]] = []
        while (event := self.next()) is not None:
            found.append(_summary(event))
        return found

    def close(self) -> None:
        self.connection.close()


def _summary(event: dict[str, Any] | None) -> tuple[str, str]:
    assert event is not None, "the watch stream ended early"
    obj = event["object"]
    label = obj["metadata"].get("name") or obj["metadata"].get("resourceVersion", "")
    return event["type"], label if obj.get("kind") != "Status" else str(obj["code"])


@dataclass(frozen=True)
class StreamedAnswer:
    """The first answer to a streamed body: its code, headers (names in lower case) and body
    text (empty for an interim 100), and how much of the body had been sent when it came."""

    sent: int
    code: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def stream_body(
    base: str,
    context: ssl.SSLContext,
    method: str,
    path: str,
    headers: dict[str, str],
    frame: bytes,
    bound: int,
) -> StreamedAnswer:
    """Send `method path` with `headers` (its framing among them), then `frame` again and again
    as its body, and stop at the first answer; fails if none comes before `bound` bytes of the
    body were sent.

    The body is sent while the answer is awaited, as a client writing a large request does; how
    far it got when the answer came bounds what the server read of it."""
    url = urlsplit(base)
    host = url.hostname or ""
    head = f"{method} {path} HTTP/1.1\r\nHost: {url.netloc}\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items()
    )
    raw = socket.create_connection((host, url.port or 443), timeout=PATIENCE_S)
    with context.wrap_socket(raw, server_hostname=host) as tls:
        tls.sendall(head.encode() + b"\r\n")
        sent, first = _send_until_answered(tls, frame, bound)
        return _first_answer(tls, sent, first)


def _send_until_answered(tls: ssl.SSLSocket, frame: bytes, bound: int) -> tuple[int, bytes]:
    """Body bytes sent, and the first bytes of the answer, once they come."""
    tls.setblocking(False)
    sent = 0
    deadline = time.monotonic() + PATIENCE_S
    why = "the server sent nothing"
    while sent < bound and time.monotonic() < deadline:
        try:
            first = tls.recv(65536)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            first = None  # no application data yet (a TLS 1.3 ticket makes a socket readable)
        except OSError as error:
            why = f"the connection failed: {error!r}"
            break
        if first is not None:
            if first:
                return sent, first
            why = "the server closed the connection without an answer"
            break
        try:
            tls.send(frame)  # all of it or nothing: OpenSSL's writes are not partial here
            sent += len(frame)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            select.select([tls], [tls], [], 0.1)
        except OSError:
            # The server stopped reading and closed: its answer may be waiting all the same.
            select.select([tls], [], [], 1.0)
    raise AssertionError(f"no answer with {sent} bytes of the body sent: {why}")


def _first_answer(tls: ssl.SSLSocket, sent: int, received: bytes) -> StreamedAnswer:
    tls.setblocking(True)
    tls.settimeout(PATIENCE_S)
    while b"\r\n\r\n" not in received and (more := tls.recv(65536)):
        received += more
    head, _, rest = received.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    code = int(status.split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines)}
    if code == 100:
        return StreamedAnswer(sent, code, headers, "")
    # Go leaves Content-Length out of a plain-text error it closes the connection after.
    length = int(headers.get("content-length", "-1"))
    while (length < 0 or len(rest) < length) and (more := tls.recv(65536)):
        rest += more
    return StreamedAnswer(sent, code, headers, (rest if length < 0 else rest[:length]).decode())
