"""The REST verbs over HTTP: shapes, status codes and Status bodies, on both backends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bundler.api.resources import HELM_RELEASE, SECRET
from bundler.apiserver import ApiServer
from tests.support.apiserver.contract import (
    BUNDLES,
    MERGE,
    NS,
    SECRETS,
    SPEC_CHANGE,
    Http,
    eventually,
    names_of,
)
from tests.support.apiserver.contract import bundle_body as bundle

HELM_RELEASES = f"/apis/helm.toolkit.fluxcd.io/v2/namespaces/{NS}/helmreleases"
# What kube-apiserver answers, as plain text, to a path no handler serves.
PAGE_NOT_FOUND = "404 page not found\n"


def test_create_get_update_patch_delete(api: Http) -> None:
    code, created = api.call("POST", BUNDLES, bundle("a"))
    assert code == 201
    assert created["metadata"]["namespace"] == api.namespace
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
    assert (code, deleted["status"]) == (200, "Success")
    assert deleted["details"] == {
        "name": "a",
        "group": "bundler.dev",
        "kind": "bundles",
        "uid": created["metadata"]["uid"],
    }
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
    last = api.call("POST", BUNDLES, bundle("b", env="dev"))[1]
    code, listed = api.call("GET", f"{BUNDLES}?labelSelector=env%3Dprod,region%3D%3Deu")
    assert code == 200
    assert listed["kind"] == "BundleList"
    assert listed["apiVersion"] == "bundler.dev/v1alpha1"
    # A list is as recent as the last write at least (others may have followed, elsewhere).
    assert int(listed["metadata"]["resourceVersion"]) >= int(last["metadata"]["resourceVersion"])
    assert names_of(listed) == ["a"]
    _, everywhere = api.call("GET", "/apis/bundler.dev/v1alpha1/bundles")
    ours = [o for o in everywhere["items"] if o["metadata"]["namespace"] == api.namespace]
    assert [o["metadata"]["name"] for o in ours] == ["a", "b"]
    _, by_name = api.call("GET", f"{BUNDLES}?fieldSelector=metadata.name%3Db")
    assert names_of(by_name) == ["b"]


set_based = pytest.mark.deliberate_difference(
    "the stand-in understands equality selectors only (the store contract's), and refuses the "
    "others with 400 so that a client relying on them fails in tests"
)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("labelSelector=env!%3Dprod", id="inequality", marks=set_based),
        pytest.param("labelSelector=env+in+(prod)", id="set-based", marks=set_based),
        pytest.param("labelSelector=env", id="exists", marks=set_based),
        pytest.param("fieldSelector=spec.x%3D1", id="unsupported-field"),
    ],
)
def test_unsupported_selectors_are_bad_requests(api: Http, query: str) -> None:
    code, status = api.call("GET", f"{BUNDLES}?{query}")
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")


ERRORS: list[tuple[str, str, str, Any, dict[str, str], int, str]] = [
    ("not-found", "GET", f"{BUNDLES}/missing", None, {}, 404, "NotFound"),
    ("already-exists", "POST", BUNDLES, bundle("dup"), {}, 409, "AlreadyExists"),
    (
        "stale-resource-version",
        "PUT",
        f"{BUNDLES}/dup",
        {**bundle("dup"), "metadata": {"name": "dup", "resourceVersion": "1"}},
        {},
        409,
        "Conflict",
    ),
    ("invalid-name", "POST", BUNDLES, bundle("Bad_Name"), {}, 422, "Invalid"),
    (
        "namespace-mismatch",
        "POST",
        BUNDLES,
        {**bundle("x"), "metadata": {"name": "x", "namespace": "other"}},
        {},
        400,
        "BadRequest",
    ),
    ("name-mismatch", "PUT", f"{BUNDLES}/dup", bundle("other"), {}, 400, "BadRequest"),
    ("kind-mismatch", "POST", BUNDLES, {**bundle("x"), "kind": "Cluster"}, {}, 422, "Invalid"),
    ("kind-missing", "POST", BUNDLES, {"metadata": {"name": "x"}}, {}, 400, "BadRequest"),
    ("body-not-an-object", "POST", BUNDLES, ["not", "an", "object"], {}, 400, "BadRequest"),
    (
        "strategic-merge-patch-of-a-custom-resource",
        "PATCH",
        f"{BUNDLES}/dup",
        {"spec": {}},
        {"Content-Type": "application/strategic-merge-patch+json"},
        415,
        "UnsupportedMediaType",
    ),
    (
        "namespace-missing",
        "POST",
        "/apis/bundler.dev/v1alpha1/namespaces/nowhere/bundles",
        bundle("x"),
        {},
        404,
        "NotFound",
    ),
    ("put-to-a-collection", "PUT", BUNDLES, bundle("x"), {}, 400, "BadRequest"),
    ("delete-a-status", "DELETE", f"{BUNDLES}/dup/status", None, {}, 405, "MethodNotAllowed"),
    ("post-to-a-status", "POST", f"{BUNDLES}/dup/status", bundle("x"), {}, 405, "MethodNotAllowed"),
    (
        "post-to-a-built-in-object",
        "POST",
        f"{SECRETS}/s",
        {"metadata": {"name": "s"}},
        {},
        405,
        "MethodNotAllowed",
    ),
    ("no-status-subresource", "GET", f"{SECRETS}/x/status", None, {}, 404, "NotFound"),
    ("unknown-built-in-plural", "GET", f"/api/v1/namespaces/{NS}/nothings", None, {}, 404,
     "NotFound"),
    ("put-to-a-built-in-collection", "PUT", SECRETS, {}, {}, 405, "MethodNotAllowed"),
    ("unknown-patch-type-of-a-built-in", "PATCH", f"{SECRETS}/s", {},
     {"Content-Type": "text/plain"}, 415, "UnsupportedMediaType"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "code", "reason"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
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


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/apis/bundler.dev/v1alpha1/namespaces/{NS}/widgets"),
        ("GET", f"/apis/bundler.dev/v9/namespaces/{NS}/bundles"),
        ("GET", "/apis/bundler.dev/v1alpha1/bundles/b"),
        ("POST", "/apis/bundler.dev/v1alpha1/bundles"),
        ("GET", "/apis/nothing.example/v1"),
        ("GET", "/nonsense"),
    ],
    ids=[
        "unknown-plural",
        "unknown-version",
        "named-object-without-its-namespace",
        "create-without-namespace",
        "unknown-group",
        "unknown-path",
    ],
)
def test_paths_no_handler_serves_are_a_plain_page_not_found(
    api: Http, method: str, path: str
) -> None:
    response = api.send(method, path, {})
    assert (response.status_code, response.text) == (404, PAGE_NOT_FOUND)
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_a_post_to_a_custom_resource_creates_whatever_name_the_path_has(api: Http) -> None:
    # The custom resource handler reads a POST as a create whatever follows the plural.
    code, created = api.call("POST", f"{BUNDLES}/elsewhere", bundle("x"))
    assert (code, created["metadata"]["name"]) == (201, "x")


def test_namespaces_and_core_kinds(api: Http) -> None:
    team = f"{api.namespace}-team"
    code, namespace = api.call("POST", "/api/v1/namespaces", {"metadata": {"name": team}})
    assert (code, namespace["status"]) == (201, {"phase": "Active"})
    assert namespace["metadata"]["labels"] == {"kubernetes.io/metadata.name": team}
    assert namespace["spec"] == {"finalizers": ["kubernetes"]}
    secret = {"metadata": {"name": "creds"}, "stringData": {"value": "x"}}
    code, created = api.call("POST", f"/api/v1/namespaces/{team}/secrets", secret)
    assert (code, created["data"]) == (201, {"value": "eA=="})
    code, deleted = api.call("DELETE", f"/api/v1/namespaces/{team}/secrets/creds")
    assert (code, deleted["kind"], deleted["status"]) == (200, "Status", "Success")
    assert api.call("GET", f"/api/v1/namespaces/{team}")[0] == 200
    _, listed = api.call("GET", "/api/v1/namespaces")
    assert {team, api.namespace} <= set(names_of(listed))


def test_deleting_a_namespace_terminates_it_then_its_contents_then_it(api: Http) -> None:
    team = f"{api.namespace}-team"
    api.call("POST", "/api/v1/namespaces", {"metadata": {"name": team}})
    api.call("POST", f"/apis/bundler.dev/v1alpha1/namespaces/{team}/bundles", bundle("a"))
    code, terminating = api.call("DELETE", f"/api/v1/namespaces/{team}")
    assert (code, terminating["status"]) == (200, {"phase": "Terminating"})
    assert terminating["metadata"]["deletionTimestamp"]
    code, refused = api.call(
        "POST", f"/apis/bundler.dev/v1alpha1/namespaces/{team}/bundles", bundle("b")
    )
    # Refused unless the namespace is gone already (the stand-in finishes deleting at once).
    assert (code, refused["reason"]) in ((403, "Forbidden"), (404, "NotFound"))

    def gone() -> bool | None:
        return api.call("GET", f"/api/v1/namespaces/{team}")[0] == 404 or None

    eventually(gone, "the namespace to be deleted")
    code, _ = api.call("GET", f"/apis/bundler.dev/v1alpha1/namespaces/{team}/bundles/a")
    assert code == 404


def test_delete_with_finalizers_answers_the_marked_object(api: Http) -> None:
    held = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "hr", "finalizers": ["finalizers.fluxcd.io"]},
        "spec": {
            "interval": "5m",
            "chart": {"spec": {"chart": "c", "sourceRef": {"kind": "HelmRepository", "name": "r"}}},
        },
    }
    assert api.call("POST", HELM_RELEASES, held)[0] == 201
    code, marked = api.call("DELETE", f"{HELM_RELEASES}/hr")
    assert code == 200
    assert marked["metadata"]["deletionTimestamp"]
    assert api.call("GET", f"{HELM_RELEASES}/hr")[0] == 200
    api.call("PATCH", f"{HELM_RELEASES}/hr", {"metadata": {"finalizers": None}}, headers=MERGE)
    assert api.call("GET", f"{HELM_RELEASES}/hr")[0] == 404


@pytest.mark.stand_in_only("takes a kind out of the served ones, as a missing CRD would")
def test_removed_resource_is_absent_from_paths_and_discovery(server: ApiServer, api: Http) -> None:
    server.remove_resource(HELM_RELEASE)
    assert api.send("GET", HELM_RELEASES).status_code == 404
    assert api.send("GET", "/apis/helm.toolkit.fluxcd.io/v2").status_code == 404
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


@pytest.mark.stand_in_only("chooses the kinds the stand-in serves")
def test_served_kinds_can_be_chosen(stand_in_certificate: tuple[Any, Any]) -> None:
    with ApiServer(resources=[SECRET], certificate=stand_in_certificate) as server:
        api = Http(server.url, token=server.admin_token, verify=str(stand_in_certificate[0]))
        assert api.call("GET", "/api/v1/namespaces/ws/secrets")[0] == 200
        assert api.send("GET", BUNDLES).status_code == 404
        assert api.call("GET", "/apis")[1]["groups"] == []
        api.close()


def test_paged_lists_are_consistent_snapshots(api: Http) -> None:
    for name in ("a", "b", "c"):
        api.call("POST", BUNDLES, bundle(name))
    _, first = api.call("GET", f"{BUNDLES}?limit=2")
    assert names_of(first) == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 1
    api.call("POST", BUNDLES, bundle("d"))
    token = first["metadata"]["continue"]
    _, second = api.call("GET", f"{BUNDLES}?limit=2&continue={token}")
    assert names_of(second) == ["c"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert second["metadata"]["continue"] == ""


def test_chunked_request_bodies_are_read(api: Http) -> None:
    body = json.dumps(bundle("chunked")).encode()
    response = api.session.post(
        api.base + api.path(BUNDLES),
        data=iter([body[:10], body[10:]]),
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert response.request.headers.get("Transfer-Encoding") == "chunked"
    assert (response.status_code, response.json()["metadata"]["name"]) == (201, "chunked")


@pytest.mark.deliberate_difference(
    "the stand-in refuses dryRun: it cannot promise a dry run leaves everything as it was"
)
def test_dry_run_is_refused(api: Http) -> None:
    code, status = api.call("POST", f"{BUNDLES}?dryRun=All", bundle("a"))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert api.call("GET", f"{BUNDLES}/a")[0] == 404


garbage_collection = pytest.mark.deliberate_difference(
    "the stand-in's garbage collection runs in the background only: it refuses the Foreground "
    "and Orphan propagation policies with 400"
)


@pytest.mark.parametrize(
    ("options", "query", "code"),
    [
        pytest.param({"preconditions": {"resourceVersion": "1"}}, "", 409, id="stale-version"),
        pytest.param({"preconditions": {"uid": "someone-else"}}, "", 409, id="other-uid"),
        pytest.param(
            {"propagationPolicy": "Foreground"}, "", 400, id="foreground", marks=garbage_collection
        ),
        pytest.param(None, "?propagationPolicy=Orphan", 400, id="orphan", marks=garbage_collection),
        pytest.param(
            {"propagationPolicy": "Background"},
            "?propagationPolicy=Background",
            200,
            id="background",
        ),
    ],
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


def test_delete_collection_deletes_what_it_selects(api: Http) -> None:
    api.call("POST", BUNDLES, bundle("a", env="dev"))
    api.call("POST", BUNDLES, bundle("b", env="prod"))
    code, deleted = api.call("DELETE", f"{BUNDLES}?labelSelector=env%3Ddev")
    assert (code, deleted["kind"], names_of(deleted)) == (200, "BundleList", ["a"])
    assert names_of(api.call("GET", BUNDLES)[1]) == ["b"]


MESSAGES: list[tuple[str, str, str, Any, str]] = [
    ("not-found", "GET", f"{BUNDLES}/missing", None, 'bundles.bundler.dev "missing" not found'),
    ("built-in-not-found", "GET", f"{SECRETS}/missing", None, 'secrets "missing" not found'),
    ("already-exists", "POST", BUNDLES, bundle("dup"), 'bundles.bundler.dev "dup" already exists'),
    (
        "stale-resource-version",
        "PUT",
        f"{BUNDLES}/dup",
        {**bundle("dup"), "metadata": {"name": "dup", "resourceVersion": "1"}},
        'Operation cannot be fulfilled on bundles.bundler.dev "dup": the object has been '
        "modified; please apply your changes to the latest version and try again",
    ),
    (
        "namespace-missing",
        "POST",
        "/apis/bundler.dev/v1alpha1/namespaces/nowhere/bundles",
        bundle("x"),
        'namespaces "nowhere" not found',
    ),
    (
        "kind-missing",
        "POST",
        BUNDLES,
        {"metadata": {"name": "x"}},
        "the object provided is unrecognized (must be of type Bundle): Object 'Kind' is missing "
        """in '{"metadata": {"name": "x"}}' ({"metadata": {"name": "x"}})""",
    ),
    (
        "api-version-missing",
        "POST",
        BUNDLES,
        {"kind": "Bundle", "metadata": {"name": "x"}},
        "the API version in the data () does not match the expected API version "
        "(bundler.dev/v1alpha1)",
    ),
    (
        "kind-mismatch",
        "POST",
        BUNDLES,
        {**bundle("x"), "kind": "Cluster"},
        'Cluster.bundler.dev "x" is invalid: kind: Invalid value: "Cluster": must be Bundle',
    ),
    (
        "body-not-an-object",
        "POST",
        BUNDLES,
        ["a"],
        "the object provided is unrecognized (must be of type Bundle): couldn't get version/kind; "
        "json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion "
        'string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } '
        "(5b2261225d)",
    ),
    (
        "namespace-mismatch",
        "POST",
        BUNDLES,
        {**bundle("x"), "metadata": {"name": "x", "namespace": "other"}},
        "the namespace of the provided object does not match the namespace sent on the request",
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "message"),
    [case[1:] for case in MESSAGES],
    ids=[case[0] for case in MESSAGES],
)
def test_refusals_say_what_kube_apiserver_says(
    api: Http, method: str, path: str, body: Any, message: str
) -> None:
    api.call("POST", BUNDLES, bundle("dup"))
    api.call("PATCH", f"{BUNDLES}/dup", SPEC_CHANGE, headers=MERGE)
    assert api.call(method, path, body)[1]["message"] == message
