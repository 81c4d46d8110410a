"""Schema defaults are filled in as kube-apiserver fills them: on writes, and on reads of objects
stored before their CRD had the default (get, list and watch alike)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bundler.apiserver import ApiServer
from bundler.apiserver.defaulting import apply_defaults
from bundler.apiserver.structural import compile_schema
from bundler.store.protocol import Obj
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    CRDS,
    WIDGET,
    WIDGET_SCHEMA,
    WIDGETS,
    Http,
    widget_crd,
)

SCHEMA = compile_schema(
    {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "default": "Slow"},
            "note": {"type": "string", "nullable": True, "default": "none"},
            "limits": {
                "type": "object",
                "default": {"cpu": "1"},
                "properties": {
                    "cpu": {"type": "string"},
                    "memory": {"type": "string", "default": "1Gi"},
                },
            },
            "ports": {
                "type": "array",
                "items": {
                    "type": "object",
                    "default": {"port": 80},
                    "properties": {"port": {"type": "integer", "default": 8080}},
                },
            },
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "string", "default": "x"},
            },
        },
    }
)


@pytest.mark.parametrize(
    ("given", "defaulted"),
    [
        ({}, {"mode": "Slow", "note": "none", "limits": {"cpu": "1", "memory": "1Gi"}}),
        (
            {"mode": None, "note": None},
            {"mode": "Slow", "note": None, "limits": {"cpu": "1", "memory": "1Gi"}},
        ),
        (
            {"mode": "Fast", "limits": {}},
            {"mode": "Fast", "note": "none", "limits": {"memory": "1Gi"}},
        ),
        (
            {"ports": [{}, None], "labels": {"a": None, "b": "c"}},
            {
                "mode": "Slow",
                "note": "none",
                "limits": {"cpu": "1", "memory": "1Gi"},
                "ports": [{"port": 8080}, {"port": 80}],
                "labels": {"a": "x", "b": "c"},
            },
        ),
    ],
    ids=["missing", "null-unless-nullable", "set-values-stay", "list-items-and-map-values"],
)
def test_apply_defaults(given: Obj, defaulted: Obj) -> None:
    apply_defaults(given, SCHEMA)
    assert given == defaulted


def test_a_default_value_is_copied_not_shared() -> None:
    first: Obj = {}
    second: Obj = {}
    apply_defaults(first, SCHEMA)
    apply_defaults(second, SCHEMA)
    first["limits"]["cpu"] = "2"
    assert second["limits"]["cpu"] == "1"


def test_writes_store_the_defaults(widgets: Http) -> None:
    body: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1, "ports": [{"name": "http"}]},
    }
    created = widgets.call("POST", WIDGETS, body)[1]
    assert created["spec"] == {"size": 1, "mode": "Slow", "ports": [{"name": "http", "port": 80}]}


@pytest.mark.stand_in_only("stores an object directly, and changes the shared Widget CRD")
def test_objects_stored_before_a_default_read_with_it(
    backend: Backend, server: ApiServer, widgets: Http
) -> None:
    server.store.create(
        WIDGET, {"metadata": {"name": "old", "namespace": widgets.namespace}, "spec": {"size": 2}}
    )
    schema = copy.deepcopy(WIDGET_SCHEMA)
    schema["properties"]["spec"]["properties"]["size"]["default"] = 5
    schema["properties"]["spec"]["properties"]["flavour"] = {"type": "string", "default": "plain"}
    current = widgets.call("GET", f"{CRDS}/widgets.example.com")[1]
    assert (
        widgets.call(
            "PUT",
            f"{CRDS}/widgets.example.com",
            {**widget_crd(schema), "metadata": current["metadata"]},
        )[0]
        == 200
    )
    expected = {"size": 2, "mode": "Slow", "flavour": "plain"}
    assert widgets.call("GET", f"{WIDGETS}/old")[1]["spec"] == expected
    assert [w["spec"] for w in widgets.call("GET", WIDGETS)[1]["items"]] == [expected]
    watch = backend.watch(widgets.path(f"{WIDGETS}?watch=true"))
    try:
        event = watch.next()
    finally:
        watch.close()
    assert event is not None
    assert event["object"]["spec"] == expected
    assert server.store.get(WIDGET, "old", widgets.namespace)["spec"] == {"size": 2}
