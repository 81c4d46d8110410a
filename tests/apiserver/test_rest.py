"""The test API server's REST verbs over plain HTTP: shapes, status codes and Status bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from bundler.api.resources import HELM_RELEASE, SECRET
from bundler.apiserver import ApiServer
from tests.apiserver.conftest import BUNDLES, MERGE, SPEC_CHANGE, Http
from tests.apiserver.conftest import bundle_body as bundle

HELM_RELEASES = "/apis/helm.toolkit.fluxcd.io/v2/namespaces/ws/helmreleases"


def test_create_get_update_patch_delete(api: Http) -> None:
    code, created = api.call("POST", BUNDLES, bundle("a"))
    assert code == 201
    assert created["metadata"]["namespace"] == "ws"
    assert created["kind"] == "Bundle"
    code, fetched = api.call("GET", f"{BUNDLES}/a")
    assert (code, fetched) == (200, created)
    fetched["spec"]["helm"]["chart"] = "nginx"
    code, updated = api.call("PUT", f"{BUNDLES}/a", fetched)
    assert (code, updated["metadata"]["generation"]) == (200, 2)
    patch = {"spec": {"helm": {"version": "1.*"}, "namespace": "web"}}
    code, patched = api.call("PATCH", f"{BUNDLES}/a", patch, headers=MERGE)
    assert (code, patched["spec"]) == (
        200,
        {"helm": {"chart": "nginx", "version": "1.*"}, "namespace": "web"},
    )
    code, patched = api.call("PATCH", f"{BUNDLES}/a", {"spec": {"namespace": None}}, headers=MERGE)
    assert (code, patched["spec"]) == (200, {"helm": {"chart": "nginx", "version": "1.*"}})
    code, deleted = api.call("DELETE", f"{BUNDLES}/a")
    assert (code, deleted["metadata"]["name"]) == (200, "a")
    assert api.call("GET", f"{BUNDLES}/a")[0] == 404


def test_status_subresource(api: Http) -> None:
    api.call("POST", BUNDLES, bundle("a"))
    status = {"status": {"resolvedVersion": "1.0.0"}, **SPEC_CHANGE}
    code, patched = api.call("PATCH", f"{BUNDLES}/a/status", status, headers=MERGE)
    assert code == 200
    assert patched["status"] == {"resolvedVersion": "1.0.0"}
    assert patched["spec"] == {"helm": {"chart": "podinfo"}}
    patched["status"] = {"resolvedVersion": "1.0.1"}
    code, updated = api.call("PUT", f"{BUNDLES}/a/status", patched)
    assert (code, updated["status"]) == (200, {"resolvedVersion": "1.0.1"})
    assert api.call("GET", f"{BUNDLES}/a/status")[1]["status"] == {"resolvedVersion": "1.0.1"}


def test_list_shape_and_label_selector(api: Http) -> None:
    api.call("POST", BUNDLES, bundle("a", env="prod", region="eu"))
    api.call("POST", BUNDLES, bundle("b", env="dev"))
    code, listed = api.call("GET", f"{BUNDLES}?labelSelector=env%3Dprod,region%3D%3Deu")
    assert code == 200
    assert listed["kind"] == "BundleList"
    assert listed["apiVersion"] == "bundler.dev/v1alpha1"
    assert listed["metadata"]["resourceVersion"] == "3"
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
    code, everywhere = api.call("GET", "/apis/bundler.dev/v1alpha1/bundles")
    assert [o["metadata"]["name"] for o in everywhere["items"]] == ["a", "b"]
    code, by_name = api.call("GET", f"{BUNDLES}?fieldSelector=metadata.name%3Db")
    assert [o["metadata"]["name"] for o in by_name["items"]] == ["b"]


@pytest.mark.parametrize(
    "query",
    [
        "labelSelector=env!%3Dprod",
        "labelSelector=env+in+(prod)",
        "labelSelector=env",
        "fieldSelector=spec.x%3D1",
    ],
    ids=["inequality", "set-based", "exists", "unsupported-field"],
)
def test_unsupported_selectors_are_bad_requests(api: Http, query: str) -> None:
    code, status = api.call("GET", f"{BUNDLES}?{query}")
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "code", "reason"),
    [
        ("GET", f"{BUNDLES}/missing", None, {}, 404, "NotFound"),
        ("POST", BUNDLES, bundle("dup"), {}, 409, "AlreadyExists"),
        (
            "PUT",
            f"{BUNDLES}/dup",
            {"metadata": {"name": "dup", "resourceVersion": "1"}},
            {},
            409,
            "Conflict",
        ),
        ("POST", BUNDLES, bundle("Bad_Name"), {}, 422, "Invalid"),
        (
            "POST",
            BUNDLES,
            {**bundle("x"), "metadata": {"name": "x", "namespace": "other"}},
            {},
            400,
            "BadRequest",
        ),
        ("PUT", f"{BUNDLES}/dup", bundle("other"), {}, 400, "BadRequest"),
        ("POST", BUNDLES, {**bundle("x"), "kind": "Cluster"}, {}, 400, "BadRequest"),
        ("POST", BUNDLES, ["not", "an", "object"], {}, 400, "BadRequest"),
        (
            "PATCH",
            f"{BUNDLES}/dup",
            {"spec": {}},
            {"Content-Type": "application/json-patch+json"},
            415,
            "UnsupportedMediaType",
        ),
        (
            "PATCH",
            f"{BUNDLES}/dup",
            {"spec": {}},
            {"Content-Type": "application/strategic-merge-patch+json"},
            415,
            "UnsupportedMediaType",
        ),
        (
            "POST",
            "/apis/bundler.dev/v1alpha1/namespaces/nowhere/bundles",
            bundle("x"),
            {},
            404,
            "NotFound",
        ),
        ("POST", f"{BUNDLES}/dup", bundle("x"), {}, 405, "MethodNotAllowed"),
        ("DELETE", BUNDLES, None, {}, 405, "MethodNotAllowed"),
        ("POST", "/apis/bundler.dev/v1alpha1/bundles", bundle("x"), {}, 405, "MethodNotAllowed"),
        ("GET", "/apis/bundler.dev/v1alpha1/namespaces/ws/widgets", None, {}, 404, "NotFound"),
        ("GET", "/apis/bundler.dev/v9/namespaces/ws/bundles", None, {}, 404, "NotFound"),
        ("GET", "/api/v1/namespaces/ws/secrets/x/status", None, {}, 404, "NotFound"),
        ("GET", "/nonsense", None, {}, 404, "NotFound"),
    ],
    ids=[
        "not-found",
        "already-exists",
        "stale-resource-version",
        "invalid-name",
        "namespace-mismatch",
        "name-mismatch",
        "kind-mismatch",
        "body-not-an-object",
        "json-patch-unsupported",
        "strategic-merge-patch-unsupported",
        "namespace-missing",
        "post-to-an-object",
        "delete-collection",
        "create-without-namespace",
        "unknown-plural",
        "unknown-version",
        "no-status-subresource",
        "unknown-path",
    ],
)
def test_errors_are_kubernetes_statuses(
    api: Http,
    method: str,
    path: str,
    body: Any,
    headers: dict[str, str],
    code: int,
    reason: str,
) -> None:
    api.call("POST", BUNDLES, bundle("dup"))
    api.call("PATCH", f"{BUNDLES}/dup", SPEC_CHANGE, headers=MERGE)
    answer_code, status = api.call(method, path, body, headers=headers)
    assert (answer_code, status["kind"], status["status"]) == (code, "Status", "Failure")
    assert (status["reason"], status["code"]) == (reason, code)
    assert status["message"]


def test_namespaces_and_core_kinds(api: Http) -> None:
    code, namespace = api.call("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    assert (code, namespace["status"]) == (201, {"phase": "Active"})
    secret = {"metadata": {"name": "creds"}, "stringData": {"value": "x"}}
    code, created = api.call("POST", "/api/v1/namespaces/team/secrets", secret)
    assert (code, created["data"]) == (201, {"value": "eA=="})
    code, deleted = api.call("DELETE", "/api/v1/namespaces/team/secrets/creds")
    assert (code, deleted["kind"], deleted["status"]) == (200, "Status", "Success")
    assert api.call("GET", "/api/v1/namespaces/team")[0] == 200
    code, names = api.call("GET", "/api/v1/namespaces")
    assert [n["metadata"]["name"] for n in names["items"]] == ["team", "ws"]
    assert api.call("DELETE", "/api/v1/namespaces/team")[0] == 200
    assert api.call("GET", "/api/v1/namespaces/team")[0] == 404


def test_delete_with_finalizers_answers_the_marked_object(api: Http) -> None:
    held = {"metadata": {"name": "hr", "finalizers": ["finalizers.fluxcd.io"]}, "spec": {}}
    api.call("POST", HELM_RELEASES, held)
    code, marked = api.call("DELETE", f"{HELM_RELEASES}/hr")
    assert code == 200
    assert marked["metadata"]["deletionTimestamp"]
    assert api.call("GET", f"{HELM_RELEASES}/hr")[0] == 200


def test_removed_resource_is_absent_from_paths_and_discovery(server: ApiServer, api: Http) -> None:
    server.remove_resource(HELM_RELEASE)
    assert api.call("GET", HELM_RELEASES)[0] == 404
    assert api.call("GET", "/apis/helm.toolkit.fluxcd.io/v2")[0] == 404
    groups = [g["name"] for g in api.call("GET", "/apis")[1]["groups"]]
    assert "helm.toolkit.fluxcd.io" not in groups
    server.add_resource(HELM_RELEASE)
    assert api.call("GET", HELM_RELEASES)[0] == 200


def test_discovery_documents(api: Http) -> None:
    assert api.call("GET", "/version")[1]["major"] == "1"
    assert api.call("GET", "/api")[1]["versions"] == ["v1"]
    core = api.call("GET", "/api/v1")[1]
    assert {
        k: v
        for k, v in next(r for r in core["resources"] if r["name"] == "secrets").items()
        if k in ("name", "kind", "namespaced")
    } == {"name": "secrets", "kind": "Secret", "namespaced": True}
    capi = api.call("GET", "/apis/cluster.x-k8s.io")[1]
    assert capi["preferredVersion"]["version"] == "v1beta2"
    bundles = api.call("GET", "/apis/bundler.dev/v1alpha1")[1]
    names = [r["name"] for r in bundles["resources"]]
    assert "bundles" in names and "bundles/status" in names
    assert api.call("GET", "/apis/nothing.example/v1")[0] == 404


def test_served_kinds_can_be_chosen(tmp_path: object) -> None:
    with ApiServer(resources=[SECRET]) as server:
        api = Http(server.url, server.admin_token)
        assert api.call("GET", "/api/v1/namespaces/ws/secrets")[0] == 200
        assert api.call("GET", BUNDLES)[0] == 404
        assert api.call("GET", "/apis")[1]["groups"] == []
        api.close()


def test_paged_lists_are_consistent_snapshots(api: Http) -> None:
    for name in ("a", "b", "c"):
        api.call("POST", BUNDLES, bundle(name))
    _, first = api.call("GET", f"{BUNDLES}?limit=2")
    assert [o["metadata"]["name"] for o in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 1
    api.call("POST", BUNDLES, bundle("d"))
    token = first["metadata"]["continue"]
    _, second = api.call("GET", f"{BUNDLES}?limit=2&continue={token}")
    assert [o["metadata"]["name"] for o in second["items"]] == ["c"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in second["metadata"]


def test_chunked_request_bodies_are_read(server: ApiServer) -> None:
    body = json.dumps(bundle("chunked")).encode()
    response = requests.post(
        server.url + BUNDLES,
        data=iter([body[:10], body[10:]]),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {server.admin_token}",
        },
        timeout=10,
    )
    assert response.request.headers.get("Transfer-Encoding") == "chunked"
    assert (response.status_code, response.json()["metadata"]["name"]) == (201, "chunked")


def test_dry_run_is_refused(api: Http) -> None:
    code, status = api.call("POST", f"{BUNDLES}?dryRun=All", bundle("a"))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert api.call("GET", f"{BUNDLES}/a")[0] == 404


@pytest.mark.parametrize(
    ("options", "query", "code"),
    [
        ({"preconditions": {"resourceVersion": "1"}}, "", 409),
        ({"preconditions": {"uid": "someone-else"}}, "", 409),
        ({"propagationPolicy": "Foreground"}, "", 400),
        (None, "?propagationPolicy=Orphan", 400),
        ({"propagationPolicy": "Background"}, "?propagationPolicy=Background", 200),
    ],
    ids=["stale-version", "other-uid", "foreground", "orphan", "background"],
)
def test_delete_options(api: Http, options: dict[str, Any] | None, query: str, code: int) -> None:
    api.call("POST", BUNDLES, bundle("a"))
    api.call("PATCH", f"{BUNDLES}/a", SPEC_CHANGE, headers=MERGE)
    assert api.call("DELETE", f"{BUNDLES}/a{query}", options)[0] == code


def test_delete_with_matching_preconditions(api: Http) -> None:
    created = api.call("POST", BUNDLES, bundle("a"))[1]
    meta = created["metadata"]
    options = {"preconditions": {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}}
    assert api.call("DELETE", f"{BUNDLES}/a", options)[0] == 200
