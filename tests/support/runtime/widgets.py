"""Widgets, the custom resource the runtime tests keep in a store, and the bound on their waits."""

from __future__ import annotations

from typing import Any

from bundler.api.resources import Resource
from bundler.store.protocol import Obj

# The runtime knows nothing of bundler's kinds, so its tests use a made-up one.
WIDGET = Resource("example.dev", "v1", "Widget", "widgets")


# Upper bound (real seconds) on waits for other threads; tests never assert on durations.
WAIT = 10.0


def widget(name: str, namespace: str = "default", **labels: str) -> Obj:
    body: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace}, "spec": {}}
    if labels:
        body["metadata"]["labels"] = labels
    return body
