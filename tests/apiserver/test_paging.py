"""Paged lists answer as kube-apiserver does: pages of `limit` from one snapshot, tokens that may be
sent again, 400 for a token that is not valid for the request, 410 Expired once it is compacted."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.apiserver import ApiServer
from bundler.apiserver.paging import ListQuery, Pager
from bundler.apiserver.statuses import HttpError
from tests.apiserver.conftest import BUNDLES, Http


def bundle(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": "ws", "labels": labels},
        "spec": {"helm": {"chart": "c"}},
    }


@pytest.fixture
def five(api: Http) -> Http:
    for name in "abcde":
        api.call("POST", BUNDLES, bundle(name, team="x"))
    return api


def names(answer: dict[str, Any]) -> list[str]:
    return [o["metadata"]["name"] for o in answer["items"]]


def test_pages_cover_the_list_once_and_a_token_may_be_sent_again(five: Http) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2")
    token = first["metadata"]["continue"]
    _, second = five.call("GET", f"{BUNDLES}?limit=2&continue={token}")
    _, again = five.call("GET", f"{BUNDLES}?limit=2&continue={token}")
    _, last = five.call("GET", f"{BUNDLES}?limit=2&continue={second['metadata']['continue']}")
    assert [names(first), names(second), names(again), names(last)] == [
        ["a", "b"],
        ["c", "d"],
        ["c", "d"],
        ["e"],
    ]
    assert (first["metadata"]["remainingItemCount"], second["metadata"]["remainingItemCount"]) == (
        3,
        1,
    )
    assert "continue" not in last["metadata"]


def test_a_selected_list_tells_no_remaining_count(five: Http) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2&labelSelector=team%3Dx")
    assert names(first) == ["a", "b"]
    assert "continue" in first["metadata"]
    assert "remainingItemCount" not in first["metadata"]


def _other_selector(token: str) -> str:
    return f"{BUNDLES}?limit=2&labelSelector=team%3Dy&continue={token}"


def _other_namespace(token: str) -> str:
    return f"/apis/bundler.dev/v1alpha1/namespaces/other/bundles?limit=2&continue={token}"


def _with_resource_version(token: str) -> str:
    return f"{BUNDLES}?limit=2&resourceVersion=1&continue={token}"


def _garbled(token: str) -> str:
    return f"{BUNDLES}?limit=2&continue=not-a-token{token[:3]}"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(_other_selector, id="other-selector"),
        pytest.param(_other_namespace, id="other-collection"),
        pytest.param(_with_resource_version, id="with-resource-version"),
        pytest.param(_garbled, id="garbled-token"),
    ],
)
def test_a_token_not_valid_for_the_request_is_bad_request(five: Http, path: Any) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2")
    code, answer = five.call("GET", path(first["metadata"]["continue"]))
    assert (code, answer["reason"]) == (400, "BadRequest")
    assert "continue" in answer["message"] or "resource version" in answer["message"]


@pytest.mark.parametrize("limit", ["-1", "two", "1.5"])
def test_a_limit_that_is_not_a_count_is_bad_request(api: Http, limit: str) -> None:
    code, answer = api.call("GET", f"{BUNDLES}?limit={limit}")
    assert (code, answer["reason"]) == (400, "BadRequest")


def test_a_compacted_token_is_expired(server: ApiServer, five: Http) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2")
    server.expire_continue_tokens()
    code, answer = five.call("GET", f"{BUNDLES}?limit=2&continue={first['metadata']['continue']}")
    assert (code, answer["reason"]) == (410, "Expired")


def test_tokens_expire_with_age_and_beyond_the_snapshot_bound() -> None:
    now = [0.0]
    pager = Pager(max_snapshots=2, ttl=10.0, clock=lambda: now[0])
    query = ListQuery("bundles/ws")
    items = [{"metadata": {"name": str(i)}} for i in range(3)]
    tokens = [pager.first(query, items, "7", 1).continue_token or "" for _ in range(3)]
    with pytest.raises(HttpError, match="too old") as evicted:
        pager.next(query, tokens[0], 1, "")
    assert evicted.value.code == 410
    assert pager.next(query, tokens[2], 1, "").items == [items[1]]
    now[0] = 11.0
    with pytest.raises(HttpError, match="too old"):
        pager.next(query, tokens[2], 1, "")
