"""What kubectl reads before it writes: the OpenAPI v3 documents (fieldValidation on every PATCH,
so kubectl lets the server validate) and the short names and categories in discovery."""

from __future__ import annotations

import pytest

from bundler.apiserver import ApiServer
from tests.apiserver.conftest import Http


def test_the_openapi_root_lists_every_served_group_version(api: Http) -> None:
    code, root = api.call("GET", "/openapi/v3")
    assert code == 200
    assert root["paths"]["apis/bundler.dev/v1alpha1"] == {
        "serverRelativeURL": "/openapi/v3/apis/bundler.dev/v1alpha1"
    }
    assert "api/v1" in root["paths"]


@pytest.mark.parametrize(
    ("document", "path", "kind"),
    [
        (
            "apis/bundler.dev/v1alpha1",
            "/apis/bundler.dev/v1alpha1/namespaces/{namespace}/bundles/{name}",
            "Bundle",
        ),
        ("api/v1", "/api/v1/namespaces/{name}", "Namespace"),
    ],
    ids=["namespaced-crd", "cluster-scoped-built-in"],
)
def test_every_patch_operation_takes_field_validation(
    api: Http, document: str, path: str, kind: str
) -> None:
    code, found = api.call("GET", f"/openapi/v3/{document}")
    assert code == 200
    patch = found["paths"][path]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == kind
    assert {"name": "fieldValidation", "in": "query"}.items() <= patch["parameters"][0].items()


@pytest.mark.parametrize(
    "path", ["/openapi/v3/apis/nowhere/v1", "/openapi/v2"], ids=["unknown-group", "v2"]
)
def test_other_openapi_paths_are_not_found(api: Http, path: str) -> None:
    code, status = api.call("GET", path)
    assert (code, status["reason"]) == (404, "NotFound")


def test_the_openapi_documents_need_authentication(server: ApiServer) -> None:
    code, _ = Http(server.url, "not-a-token").call("GET", "/openapi/v3")
    assert code == 401


@pytest.mark.parametrize(
    ("group_version", "plural", "names"),
    [
        (
            "apis/bundler.dev/v1alpha1",
            "bundles",
            {"shortNames": ["bdl"], "categories": ["bundler"]},
        ),
        (
            "apis/bundler.dev/v1alpha1",
            "clusters",
            {"shortNames": ["bcl"], "categories": ["bundler"]},
        ),
        ("api/v1", "namespaces", {"shortNames": ["ns"]}),
        ("api/v1", "secrets", {}),
    ],
    ids=["bundle", "cluster", "namespace", "secret-has-none"],
)
def test_discovery_carries_short_names_and_categories(
    api: Http, group_version: str, plural: str, names: dict[str, list[str]]
) -> None:
    _, listed = api.call("GET", f"/{group_version}")
    (found,) = [r for r in listed["resources"] if r["name"] == plural]
    assert {k: found[k] for k in ("shortNames", "categories") if k in found} == names
