"""Fixtures for the test API server: a running server with a namespace, and small HTTP helpers."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from bundler.api.resources import NAMESPACE
from bundler.apiserver import ApiServer
from bundler.store.protocol import Obj

BUNDLES = "/apis/bundler.dev/v1alpha1/namespaces/ws/bundles"
MERGE = {"Content-Type": "application/merge-patch+json"}


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
        data = None if body is None else json.dumps(body)
        response = self.session.request(method, self.base + path, data=data, timeout=10, **kwargs)
        return response.status_code, response.json()

    def close(self) -> None:
        self.session.close()


@pytest.fixture
def api(server: ApiServer) -> Iterator[Http]:
    client = Http(server.url, server.admin_token)
    yield client
    client.close()


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
