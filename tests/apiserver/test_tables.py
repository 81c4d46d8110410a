"""Table answers for kubectl: the columns and cells per kind, what rows carry, and over HTTP the
get, list and watch requests kubectl makes with its Accept header."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_GROUP,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.apiserver.statuses import HttpError
from bundler.apiserver.tables import (
    IncludeObject,
    TableView,
    human_duration,
    table_view,
    wants_table,
)
from bundler.store.protocol import Obj
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import BUNDLES, NS, SECRETS, Http, bundle_body

KUBECTL_TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
FIVE_MINUTES_AGO = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")


def obj(name: str, status: Obj | None = None, spec: Obj | None = None) -> Obj:
    found: Obj = {"metadata": {"name": name, "creationTimestamp": FIVE_MINUTES_AGO}}
    if status is not None:
        found["status"] = status
    if spec is not None:
        found["spec"] = spec
    return found


@pytest.mark.parametrize(
    ("res", "columns"),
    [
        (BUNDLE, ["Name", "Ready", "State", "Version", "Gate", "Age"]),
        (CLUSTER, ["Name", "Bundles-Ready", "State", "Last-Seen", "Age"]),
        (CLUSTER_GROUP, ["Name", "Clusters", "Non-Ready", "State", "Age"]),
        (BUNDLE_DEPLOYMENT, ["Name", "Deployment-ID", "Applied", "Ready", "Age"]),
        (SECRET, ["Name", "Type", "Data", "Age"]),
        (NAMESPACE, ["Name", "Status", "Age"]),
    ],
    ids=["bundle", "cluster", "cluster-group", "bundle-deployment", "secret", "namespace"],
)
def test_columns_are_name_then_the_crd_printer_columns_or_age(
    res: Resource, columns: list[str]
) -> None:
    table = TableView(res, IncludeObject.NONE).of_answer(obj("x"), NOW)
    definitions = table["columnDefinitions"]
    assert [c["name"] for c in definitions] == columns
    assert all(set(c) == {"name", "type", "format", "description", "priority"} for c in definitions)
    assert definitions[0]["format"] == "name"


@pytest.mark.parametrize(
    ("res", "given", "cells"),
    [
        (
            BUNDLE,
            obj("web", {"display": {"readyClusters": "2/3", "state": "NotReady"}}),
            ["web", "2/3", "NotReady", None, None, "5m"],
        ),
        (BUNDLE, obj("new"), ["new", None, None, None, None, "5m"]),
        (
            CLUSTER_GROUP,
            obj("g", {"clusterCount": 3, "nonReadyClusterCount": 1}),
            ["g", 3, 1, None, "5m"],
        ),
        (
            BUNDLE_DEPLOYMENT,
            obj("bd", {"ready": True, "appliedDeploymentID": "s-1"}, {"deploymentID": "s-1"}),
            ["bd", "s-1", "s-1", True, "5m"],
        ),
        (
            CLUSTER,
            obj("c", {"agent": {"lastSeen": FIVE_MINUTES_AGO}}),
            ["c", None, None, "5m", "5m"],
        ),
        (
            CLUSTER,
            obj("c", {"agent": {"lastSeen": "yesterday"}}),
            ["c", None, None, "<invalid>", "5m"],
        ),
        (
            SECRET,
            {**obj("creds"), "type": "Opaque", "data": {"a": "Yg=="}},
            ["creds", "Opaque", 1, "5m"],
        ),
    ],
    ids=[
        "bundle-ready-and-state",
        "bundle-without-status-has-null-cells",
        "integers-stay-integers",
        "booleans-stay-booleans",
        "dates-print-as-ages",
        "a-bad-date-is-invalid",
        "built-in-printer",
    ],
)
def test_cells_follow_the_column_types(res: Resource, given: Obj, cells: list[Any]) -> None:
    table = TableView(res, IncludeObject.NONE).of_answer(given, NOW)
    assert table["rows"] == [{"cells": cells, "object": None}]


@pytest.mark.parametrize(
    ("include", "expected"),
    [
        (IncludeObject.NONE, None),
        (
            IncludeObject.METADATA,
            {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": {"name": "web", "creationTimestamp": FIVE_MINUTES_AGO},
            },
        ),
        (IncludeObject.OBJECT, obj("web", {"ready": 1})),
    ],
    ids=["none-omits-it", "metadata-is-partial-object-metadata", "object-is-the-whole-object"],
)
def test_include_object_decides_what_each_row_carries(
    include: IncludeObject, expected: Obj | None
) -> None:
    row = TableView(BUNDLE, include).of_answer(obj("web", {"ready": 1}), NOW)["rows"][0]
    assert row.get("object") == expected


def test_a_list_answer_keeps_its_list_metadata_and_order() -> None:
    listed = {
        "kind": "BundleList",
        "metadata": {"resourceVersion": "7", "continue": "abc"},
        "items": [obj("a"), obj("b")],
    }
    table = TableView(BUNDLE, IncludeObject.NONE).of_answer(listed, NOW)
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert table["metadata"] == {"resourceVersion": "7", "continue": "abc"}
    assert [row["cells"][0] for row in table["rows"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("seconds", "printed"),
    [
        (-5, "<invalid>"),
        (-0.5, "0s"),
        (0, "0s"),
        (119, "119s"),
        (125, "2m5s"),
        (180, "3m"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 300, "3h5m"),
        (9 * 3600 + 300, "9h"),
        (50 * 3600, "2d2h"),
        (10 * 86400, "10d"),
        (3 * 365 * 86400, "3y"),
        (3 * 365 * 86400 + 86400, "3y1d"),
        (9 * 365 * 86400, "9y"),
    ],
    ids=lambda value: str(value),
)
def test_ages_print_as_kubectl_prints_them(seconds: float, printed: str) -> None:
    assert human_duration(seconds) == printed


@pytest.mark.parametrize(
    ("accept", "wanted"),
    [
        (KUBECTL_TABLE, True),
        ("application/json;g=meta.k8s.io;v=v1;as=Table", True),
        ("application/json", False),
        ("", False),
        ("application/json;as=Table", False),
        ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", False),
    ],
    ids=["kubectl", "parameters-in-any-order", "json", "none", "no-group", "discovery"],
)
def test_only_a_meta_k8s_io_table_accept_asks_for_a_table(accept: str, wanted: bool) -> None:
    assert wants_table(accept) is wanted


def test_an_unknown_include_object_is_a_bad_request() -> None:
    with pytest.raises(HttpError) as raised:
        table_view(KUBECTL_TABLE, {"includeObject": "Everything"}, BUNDLE)
    assert raised.value.code == 400
    assert "Everything" in raised.value.message


# -- over HTTP ------------------------------------------------------------------------------------

TABLE = {"Accept": KUBECTL_TABLE}


@pytest.mark.parametrize(
    ("path", "names", "columns"),
    [
        (BUNDLES, ["a", "b"], ["Name", "Ready", "State", "Version", "Gate", "Age"]),
        (f"{BUNDLES}/b", ["b"], ["Name", "Ready", "State", "Version", "Gate", "Age"]),
        (f"/api/v1/namespaces?fieldSelector=metadata.name%3D{NS}", [NS], ["Name", "Status", "Age"]),
        (f"/api/v1/namespaces/{NS}", [NS], ["Name", "Status", "Age"]),
        (f"{SECRETS}/s", ["s"], ["Name", "Type", "Data", "Age"]),
    ],
    ids=["crd-list", "crd-get", "built-in-list", "built-in-get", "secret"],
)  # fmt: skip
def test_get_and_list_answer_tables_to_kubectl(
    api: Http, path: str, names: list[str], columns: list[str]
) -> None:
    for name in ("a", "b"):
        api.call("POST", BUNDLES, bundle_body(name))
    api.call("POST", SECRETS, {"metadata": {"name": "s"}})
    code, table = api.call("GET", path, headers=TABLE)
    assert (code, table["kind"]) == (200, "Table")
    assert [c["name"] for c in table["columnDefinitions"]] == columns
    assert [row["cells"][0] for row in table["rows"]] == [api.path(n) for n in names]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


@pytest.mark.parametrize(
    ("query", "kind"),
    [("includeObject=Object", "Bundle"), ("includeObject=None", None)],
    ids=["object", "none"],
)
def test_include_object_is_read_from_the_query(api: Http, query: str, kind: str | None) -> None:
    api.call("POST", BUNDLES, bundle_body("a"))
    _, table = api.call("GET", f"{BUNDLES}?{query}", headers=TABLE)
    assert (table["rows"][0]["object"] or {}).get("kind") == kind


def test_a_bad_include_object_is_a_400_status(api: Http) -> None:
    code, status = api.call("GET", f"{BUNDLES}?includeObject=All", headers=TABLE)
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")


def test_plain_json_requests_still_get_objects(api: Http) -> None:
    api.call("POST", BUNDLES, bundle_body("a"))
    code, listed = api.call("GET", BUNDLES, headers={"Accept": "application/json"})
    assert (code, listed["kind"]) == (200, "BundleList")


def test_a_table_watch_sends_one_row_tables_with_the_columns_first(
    backend: Backend, api: Http
) -> None:
    api.call("POST", BUNDLES, bundle_body("a"))
    watch = backend.watch(api.path(f"{BUNDLES}?watch=true&timeoutSeconds=30"), accept=KUBECTL_TABLE)
    try:
        first = watch.next()
        api.call("POST", BUNDLES, bundle_body("b"))
        second = watch.next()
    finally:
        watch.close()
    assert first is not None and second is not None
    assert [e["type"] for e in (first, second)] == ["ADDED", "ADDED"]
    assert [e["object"]["kind"] for e in (first, second)] == ["Table", "Table"]
    assert [c["name"] for c in first["object"]["columnDefinitions"]][:2] == ["Name", "Ready"]
    assert second["object"]["columnDefinitions"] is None
    assert [e["object"]["rows"][0]["cells"][0] for e in (first, second)] == ["a", "b"]
