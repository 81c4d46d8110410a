"""Patch formats: JSON merge patches everywhere, strategic merge patches of built-in kinds (which
kubectl apply sends) when they carry no directives, as a merge patch means the same there."""

from __future__ import annotations

import pytest

from tests.support.apiserver.contract import Http

STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
SECRET = "/api/v1/namespaces/{ns}/secrets/creds"


@pytest.fixture
def secret(api: Http) -> None:
    body = {"metadata": {"name": "creds", "labels": {"a": "1"}}, "stringData": {"k": "v"}}
    code, _ = api.call("POST", "/api/v1/namespaces/{ns}/secrets", body)
    assert code == 201


@pytest.mark.usefixtures("secret")
def test_a_strategic_merge_patch_of_a_built_in_kind_merges(api: Http) -> None:
    patch = {"metadata": {"labels": {"b": "2", "a": None}}}
    code, patched = api.call("PATCH", SECRET, patch, headers=STRATEGIC)
    assert code == 200
    assert patched["metadata"]["labels"] == {"b": "2"}


@pytest.mark.deliberate_difference(
    "the stand-in takes a strategic merge patch of a built-in kind only without directives, "
    "where it means what a merge patch means (writes are create, update and merge patch)"
)
@pytest.mark.usefixtures("secret")
@pytest.mark.parametrize(
    "patch",
    [
        {"$retainKeys": ["data"], "data": {}},
        {"$setElementOrder/items": [{"name": "x"}]},
        {"data": [{"$patch": "delete"}]},
    ],
    ids=["retain-keys", "element-order", "directive-in-a-list"],
)
def test_strategic_merge_patch_directives_are_refused(api: Http, patch: dict[str, object]) -> None:
    code, status = api.call("PATCH", SECRET, patch, headers=STRATEGIC)
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")


@pytest.mark.deliberate_difference(
    "the stand-in takes no JSON patch and no server-side apply (design: writes are create, "
    "update and merge patch, so the contract stays small); it answers 415"
)
@pytest.mark.usefixtures("secret")
@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        ("application/json-patch+json", [{"op": "add", "path": "/data/b", "value": "Yg=="}]),
        ("application/apply-patch+yaml", {"apiVersion": "v1", "kind": "Secret"}),
    ],
    ids=["json-patch", "apply"],
)
def test_json_patches_and_apply_are_refused(api: Http, content_type: str, patch: object) -> None:
    code, status = api.call(
        "PATCH", f"{SECRET}?fieldManager=test", patch, headers={"Content-Type": content_type}
    )
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
