"""Watch streams of the test API server, read line by line over plain HTTP."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from bundler.api.resources import BUNDLE
from bundler.apiserver import ApiServer
from bundler.store.memory import MemoryStore
from tests.apiserver.conftest import BUNDLES, MERGE, SPEC_CHANGE, Http, WatchReader, bundle_body

OpenWatch = Callable[[str], WatchReader]


def add(api: Http, name: str, **labels: str) -> str:
    code, created = api.call("POST", BUNDLES, bundle_body(name, **labels))
    assert code == 201
    return str(created["metadata"]["resourceVersion"])


def test_watch_without_version_starts_with_the_current_objects(
    api: Http, open_watch: OpenWatch
) -> None:
    add(api, "a")
    add(api, "b")
    watch = open_watch(f"{BUNDLES}?watch=true")
    assert watch.response.status == 200
    assert watch.response.getheader("Content-Type") == "application/json"
    assert watch.events(2) == [("ADDED", "a"), ("ADDED", "b")]
    api.call("PATCH", f"{BUNDLES}/a", SPEC_CHANGE, headers=MERGE)
    api.call("DELETE", f"{BUNDLES}/b")
    assert watch.events(2) == [("MODIFIED", "a"), ("DELETED", "b")]


def test_watch_from_a_version_replays_what_followed_it(api: Http, open_watch: OpenWatch) -> None:
    first = add(api, "a")
    add(api, "b")
    api.call("DELETE", f"{BUNDLES}/a")
    watch = open_watch(f"{BUNDLES}?watch=1&resourceVersion={first}")
    assert watch.events(2) == [("ADDED", "b"), ("DELETED", "a")]


def test_watch_objects_carry_their_resource_version(api: Http, open_watch: OpenWatch) -> None:
    watch = open_watch(f"{BUNDLES}?watch=true&resourceVersion=1")
    rv = add(api, "a")
    event = watch.next()
    assert event is not None
    assert event["object"]["metadata"]["resourceVersion"] == rv


def test_too_old_version_is_a_410_error_event() -> None:
    with ApiServer(MemoryStore(history_size=1)) as server:
        api = Http(server.url, server.admin_token)
        for name in ("ws", "other", "third"):
            api.call("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        watch = WatchReader(
            server.url, f"{BUNDLES}?watch=true&resourceVersion=1", server.admin_token
        )
        try:
            assert watch.response.status == 200
            event = watch.next()
            assert event is not None
            assert event["type"] == "ERROR"
            assert event["object"]["kind"] == "Status"
            assert event["object"]["code"] == 410
            assert event["object"]["reason"] == "Expired"
            assert watch.next() is None
        finally:
            watch.close()
            api.close()


def test_watch_ends_at_timeout_with_a_bookmark(api: Http, open_watch: OpenWatch) -> None:
    add(api, "a")
    watch = open_watch(f"{BUNDLES}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true")
    assert watch.rest() == [("ADDED", "a"), ("BOOKMARK", "2")]


def test_label_selected_watch(api: Http, open_watch: OpenWatch) -> None:
    add(api, "a", env="dev")
    watch = open_watch(f"{BUNDLES}?watch=true&labelSelector=env%3Dprod")
    add(api, "b", env="prod")
    api.call("PATCH", f"{BUNDLES}/a", {"metadata": {"labels": {"env": "prod"}}}, headers=MERGE)
    api.call("PATCH", f"{BUNDLES}/b", {"metadata": {"labels": {"env": "dev"}}}, headers=MERGE)
    assert watch.events(3) == [("ADDED", "b"), ("ADDED", "a"), ("DELETED", "b")]


def test_field_selected_watch(api: Http, open_watch: OpenWatch) -> None:
    watch = open_watch(f"{BUNDLES}?watch=true&fieldSelector=metadata.name%3Db")
    add(api, "a")
    add(api, "b")
    assert watch.events(1) == [("ADDED", "b")]


def test_cluster_wide_watch(api: Http, open_watch: OpenWatch) -> None:
    api.call("POST", "/api/v1/namespaces", {"metadata": {"name": "other"}})
    watch = open_watch("/apis/bundler.dev/v1alpha1/bundles?watch=true")
    add(api, "a")
    api.call("POST", "/apis/bundler.dev/v1alpha1/namespaces/other/bundles", bundle_body("b"))
    assert watch.events(2) == [("ADDED", "a"), ("ADDED", "b")]


def test_open_watches_do_not_block_other_requests(api: Http, open_watch: OpenWatch) -> None:
    watches = [open_watch(f"{BUNDLES}?watch=true") for _ in range(5)]
    add(api, "a")
    assert api.call("GET", f"{BUNDLES}/a")[0] == 200
    for watch in watches:
        assert watch.events(1) == [("ADDED", "a")]


@pytest.mark.parametrize(
    "query",
    ["resourceVersion=abc", "timeoutSeconds=soon", "labelSelector=a!%3Db"],
    ids=["bad-resource-version", "bad-timeout", "bad-selector"],
)
def test_bad_watch_parameters_are_bad_requests(api: Http, query: str) -> None:
    code, status = api.call("GET", f"{BUNDLES}?watch=true&{query}")
    assert (code, status["reason"]) == (400, "BadRequest")


def test_store_writes_reach_http_watchers(server: ApiServer, open_watch: OpenWatch) -> None:
    watch = open_watch(f"{BUNDLES}?watch=true")
    server.store.create(BUNDLE, {"metadata": {"name": "direct", "namespace": "ws"}})
    assert watch.events(1) == [("ADDED", "direct")]


def test_stop_ends_open_watch_streams() -> None:
    server = ApiServer().start()
    watch = WatchReader(server.url, "/api/v1/namespaces?watch=true", server.admin_token)
    assert watch.response.status == 200
    ended = threading.Event()

    def drain() -> None:
        watch.rest()
        ended.set()

    reader = threading.Thread(target=drain)
    reader.start()
    server.stop()
    reader.join(timeout=10)
    watch.close()
    assert ended.is_set()
