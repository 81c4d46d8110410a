"""Fixtures for the test API server: a running server with a namespace, small HTTP helpers, and
Widgets: a custom resource whose CRD, applied through the API, uses every schema feature the
server checks."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from bundler.api.resources import CUSTOM_RESOURCE_DEFINITION, NAMESPACE, Resource
from bundler.apiserver import ApiServer
from bundler.store.protocol import Obj

BUNDLES = "/apis/bundler.dev/v1alpha1/namespaces/ws/bundles"
MERGE = {"Content-Type": "application/merge-patch+json"}
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGET = Resource("example.com", "v1", "Widget", "widgets", status_subresource=True)
WIDGETS = "/apis/example.com/v1/namespaces/ws/widgets"
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
    return {"metadata": {"name": name, "labels": labels}, "spec": {"helm": {"chart": "podinfo"}}}


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


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer() as running:
        running.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        yield running


class Http:
    """JSON over HTTP to one server: every call returns (status code, decoded body)."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Obj]:
        response = self.send(method, path, body, **kwargs)
        return response.status_code, response.json()

    def send(
        self, method: str, path: str, body: Any = None, *, raw: str | None = None, **kwargs: Any
    ) -> requests.Response:
        """The whole response to `body` as JSON, or to the `raw` text as it is."""
        data = raw if raw is not None else None if body is None else json.dumps(body)
        return self.session.request(method, self.base + path, data=data, timeout=10, **kwargs)

    def close(self) -> None:
        self.session.close()


@pytest.fixture
def api(server: ApiServer) -> Iterator[Http]:
    client = Http(server.url, server.admin_token)
    yield client
    client.close()


@pytest.fixture
def widgets(server: ApiServer, api: Http) -> Http:
    """`api` on a server that serves Widgets, their CRD applied through the API."""
    server.add_resource(CUSTOM_RESOURCE_DEFINITION)
    server.add_resource(WIDGET)
    code, _ = api.call("POST", CRDS, widget_crd())
    assert code == 201
    return api


class WatchReader:
    """Reads a watch response line by line, with a socket timeout so a test can never hang."""

    def __init__(self, base: str, path: str, token: str) -> None:
        url = urlsplit(base)
        self.connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
        self.connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
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


@pytest.fixture
def open_watch(server: ApiServer) -> Iterator[Callable[[str], WatchReader]]:
    """Opens watches on the server by path; closes them all after the test."""
    opened: list[WatchReader] = []

    def start(path: str) -> WatchReader:
        reader = WatchReader(server.url, path, server.admin_token)
        opened.append(reader)
        return reader

    yield start
    for reader in opened:
        reader.close()
