"""Patch formats: JSON merge patches everywhere, strategic merge patches of built-in kinds (which
kubectl apply sends) when they carry no directives, as a merge patch means the same there."""

from __future__ import annotations

import pytest

from tests.apiserver.conftest import Http

STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
SECRET = "/api/v1/namespaces/ws/secrets/creds"


@pytest.fixture
def secret(api: Http) -> None:
    body = {"metadata": {"name": "creds", "labels": {"a": "1"}}, "stringData": {"k": "v"}}
    code, _ = api.call("POST", "/api/v1/namespaces/ws/secrets", body)
    assert code == 201


@pytest.mark.usefixtures("secret")
def test_a_strategic_merge_patch_of_a_built_in_kind_merges(api: Http) -> None:
    patch = {"metadata": {"labels": {"b": "2", "a": None}}}
    code, patched = api.call("PATCH", SECRET, patch, headers=STRATEGIC)
    assert code == 200
    assert patched["metadata"]["labels"] == {"b": "2"}


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
