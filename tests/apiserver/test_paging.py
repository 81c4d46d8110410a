"""Paged lists answer as kube-apiserver does: pages of `limit` from one snapshot, tokens that may be
sent again, and with another namespace or selector (a token is a resourceVersion and a key), 400
for a token that does not decode or comes with a resourceVersion, 410 Expired once compacted."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.apiserver import ApiServer
from bundler.apiserver.paging import ListQuery, Pager
from bundler.apiserver.statuses import HttpError
from tests.support.apiserver.contract import BUNDLES, Http, bundle_body, names_of


@pytest.fixture
def five(api: Http) -> Http:
    for name in "abcde":
        assert api.call("POST", BUNDLES, bundle_body(name, team="x"))[0] == 201
    return api


def test_pages_cover_the_list_once_and_a_token_may_be_sent_again(five: Http) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2")
    token = first["metadata"]["continue"]
    _, second = five.call("GET", f"{BUNDLES}?limit=2&continue={token}")
    _, again = five.call("GET", f"{BUNDLES}?limit=2&continue={token}")
    _, last = five.call("GET", f"{BUNDLES}?limit=2&continue={second['metadata']['continue']}")
    assert [names_of(first), names_of(second), names_of(again), names_of(last)] == [
        ["a", "b"],
        ["c", "d"],
        ["c", "d"],
        ["e"],
    ]
    assert (first["metadata"]["remainingItemCount"], second["metadata"]["remainingItemCount"]) == (
        3,
        1,
    )
    # A custom resource list is unstructured: its last page says `continue: ""`.
    assert last["metadata"]["continue"] == ""
    assert first["metadata"]["resourceVersion"] == last["metadata"]["resourceVersion"]


def test_a_selected_list_tells_no_remaining_count(five: Http) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2&labelSelector=team%3Dx")
    assert names_of(first) == ["a", "b"]
    assert "continue" in first["metadata"]
    assert "remainingItemCount" not in first["metadata"]


def test_a_token_continues_whatever_selection_it_is_sent_with(api: Http) -> None:
    for name, team in (("a", "x"), ("b", "y"), ("c", "x"), ("d", "y")):
        assert api.call("POST", BUNDLES, bundle_body(name, team=team))[0] == 201
    _, first = api.call("GET", f"{BUNDLES}?limit=1")
    token = first["metadata"]["continue"]
    _, selected = api.call("GET", f"{BUNDLES}?limit=1&labelSelector=team%3Dy&continue={token}")
    assert (names_of(first), names_of(selected)) == (["a"], ["b"])


def test_a_token_continues_in_whatever_namespace_it_is_sent_to(api: Http) -> None:
    other = f"{api.namespace}-other"
    assert api.call("POST", "/api/v1/namespaces", {"metadata": {"name": other}})[0] == 201
    elsewhere = f"/apis/bundler.dev/v1alpha1/namespaces/{other}/bundles"
    for name in ("a", "c"):
        assert api.call("POST", elsewhere, bundle_body(name))[0] == 201
    for name in ("a", "b"):
        assert api.call("POST", BUNDLES, bundle_body(name))[0] == 201
    _, first = api.call("GET", f"{BUNDLES}?limit=1")
    _, continued = api.call("GET", f"{elsewhere}?limit=1&continue={first['metadata']['continue']}")
    assert (names_of(first), names_of(continued)) == (["a"], ["c"])
    assert continued["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "resourceVersion=1&continue={token}",
            "specifying resource version is not allowed when using continue",
        ),
        ("continue=not-a-token", "invalid continue token: continue key is not valid: "),
    ],
    ids=["with-resource-version", "garbled-token"],
)
def test_a_token_that_cannot_be_used_is_a_bad_request(five: Http, query: str, message: str) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2")
    sent = query.replace("{token}", first["metadata"]["continue"])
    code, answer = five.call("GET", f"{BUNDLES}?limit=2&{sent}")
    assert (code, answer["reason"]) == (400, "BadRequest")
    assert answer["message"].startswith(message)


@pytest.mark.parametrize("limit", ["two", "1.5"])
def test_a_limit_that_is_not_an_integer_is_bad_request(api: Http, limit: str) -> None:
    code, answer = api.call("GET", f"{BUNDLES}?limit={limit}")
    assert (code, answer["reason"]) == (400, "BadRequest")
    assert answer["message"] == f'strconv.ParseInt: parsing "{limit}": invalid syntax'


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_limit_below_one_is_no_limit(five: Http, limit: str) -> None:
    code, answer = five.call("GET", f"{BUNDLES}?limit={limit}")
    assert (code, names_of(answer), answer["metadata"]["continue"]) == (
        200,
        ["a", "b", "c", "d", "e"],
        "",
    )


@pytest.mark.stand_in_only("expires the continue tokens, as etcd's compaction does")
def test_a_compacted_token_is_expired(server: ApiServer, five: Http) -> None:
    _, first = five.call("GET", f"{BUNDLES}?limit=2")
    server.expire_continue_tokens()
    code, answer = five.call("GET", f"{BUNDLES}?limit=2&continue={first['metadata']['continue']}")
    assert (code, answer["reason"]) == (410, "Expired")


def test_tokens_expire_with_age_and_beyond_the_snapshot_bound() -> None:
    now = [0.0]
    pager = Pager(max_snapshots=2, ttl=10.0, clock=lambda: now[0])
    query = ListQuery("bundles", "ws")
    items = [{"metadata": {"name": str(i), "namespace": "ws"}} for i in range(3)]

    def everything(obj: dict[str, Any]) -> bool:
        return True

    tokens = [
        pager.first(query, items, rv, 1, everything).continue_token or "" for rv in ("7", "8", "9")
    ]
    assert all(tokens), "every first page has a next one"
    with pytest.raises(HttpError, match="too old") as evicted:
        pager.next(query, tokens[0], 1, "", everything)
    assert evicted.value.code == 410
    assert pager.next(query, tokens[2], 1, "", everything).items == [items[1]]
    now[0] = 11.0
    with pytest.raises(HttpError, match="too old"):
        pager.next(query, tokens[2], 1, "", everything)
