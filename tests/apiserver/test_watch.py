"""Watch streams, read line by line over HTTP, on both backends."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from bundler.api.resources import BUNDLE
from bundler.apiserver import ApiServer
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    BUNDLES,
    MERGE,
    SPEC_CHANGE,
    Http,
    WatchReader,
    bundle_body,
)

OpenWatch = Callable[[str], WatchReader]


def add(api: Http, name: str, **labels: str) -> str:
    code, created = api.call("POST", BUNDLES, bundle_body(name, **labels))
    assert code == 201
    return str(created["metadata"]["resourceVersion"])


def now(api: Http) -> str:
    """The resourceVersion of the test namespace's Bundles as of now (a list's)."""
    return str(api.call("GET", BUNDLES)[1]["metadata"]["resourceVersion"])


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
    watch = open_watch(f"{BUNDLES}?watch=true&resourceVersion={now(api)}")
    rv = add(api, "a")
    event = watch.next()
    assert event is not None
    assert event["object"]["metadata"]["resourceVersion"] == rv


@pytest.mark.stand_in_history(1)
def test_too_old_version_is_a_410_error_event(api: Http, open_watch: OpenWatch) -> None:
    # Writes elsewhere push resourceVersion 1 out of any history a server keeps for watches.
    for suffix in ("x", "y", "z"):
        api.call("POST", "/api/v1/namespaces", {"metadata": {"name": f"{api.namespace}-{suffix}"}})
    watch = open_watch(f"{BUNDLES}?watch=true&resourceVersion=1")
    assert watch.response.status == 200
    event = watch.next()
    assert event is not None
    assert event["type"] == "ERROR"
    assert event["object"]["kind"] == "Status"
    assert event["object"]["code"] == 410
    assert event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith("too old resource version: 1 (")
    assert watch.next() is None


def test_initial_events_end_with_a_bookmark_when_bookmarks_are_allowed(
    api: Http, open_watch: OpenWatch
) -> None:
    rv = add(api, "a")
    watch = open_watch(f"{BUNDLES}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true")
    assert watch.events(1) == [("ADDED", "a")]
    bookmark = watch.next()
    assert bookmark is not None
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= int(rv)


@pytest.mark.deliberate_difference(
    "the stand-in sends an idle watch a bookmark every bookmark_interval and one as it times out, "
    "carrying the last resourceVersion sent; kube-apiserver sends one about 2 s before the "
    "timeout and once a minute, and only when the kind's resourceVersion has moved on"
)
def test_an_idle_watch_ends_at_its_timeout_with_a_bookmark(
    api: Http, open_watch: OpenWatch
) -> None:
    since = now(api)
    watch = open_watch(
        f"{BUNDLES}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion={since}"
    )
    assert watch.rest() == [("BOOKMARK", since)]


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
    other = f"{api.namespace}-other"
    api.call("POST", "/api/v1/namespaces", {"metadata": {"name": other}})
    watch = open_watch(f"/apis/bundler.dev/v1alpha1/bundles?watch=true&resourceVersion={now(api)}")
    add(api, "a")
    api.call("POST", f"/apis/bundler.dev/v1alpha1/namespaces/{other}/bundles", bundle_body("b"))
    assert watch.events(2) == [("ADDED", "a"), ("ADDED", "b")]


def test_open_watches_do_not_block_other_requests(api: Http, open_watch: OpenWatch) -> None:
    watches = [open_watch(f"{BUNDLES}?watch=true") for _ in range(5)]
    add(api, "a")
    assert api.call("GET", f"{BUNDLES}/a")[0] == 200
    assert watches, "watches were opened"
    for watch in watches:
        assert watch.events(1) == [("ADDED", "a")]


SET_BASED = (
    "the stand-in understands equality selectors only (the store contract's), and refuses the "
    "others with 400 so that a client relying on them fails in tests"
)


@pytest.mark.parametrize(
    ("query", "code", "message"),
    [
        pytest.param(
            "resourceVersion=abc",
            500,
            'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": '
            "invalid syntax",
            id="bad-resource-version",
        ),
        pytest.param(
            "timeoutSeconds=soon",
            400,
            'strconv.ParseInt: parsing "soon": invalid syntax',
            id="bad-timeout",
        ),
        pytest.param(
            "labelSelector=a!%3Db",
            400,
            None,
            id="set-based-selector",
            marks=pytest.mark.deliberate_difference(SET_BASED),
        ),
    ],
)
def test_bad_watch_parameters_are_refused(
    api: Http, query: str, code: int, message: str | None
) -> None:
    answer_code, status = api.call("GET", f"{BUNDLES}?watch=true&{query}")
    assert (answer_code, status["kind"]) == (code, "Status")
    if message is not None:
        assert status["message"] == message


@pytest.mark.stand_in_only("writes to the stand-in's store directly, as `bundler dev`'s manager")
def test_store_writes_reach_http_watchers(
    server: ApiServer, api: Http, open_watch: OpenWatch
) -> None:
    watch = open_watch(f"{BUNDLES}?watch=true")
    server.store.create(BUNDLE, {"metadata": {"name": "direct", "namespace": api.namespace}})
    assert watch.events(1) == [("ADDED", "direct")]


@pytest.mark.stand_in_only("stops the stand-in while a watch is open")
def test_stop_ends_open_watch_streams(backend: Backend, server: ApiServer) -> None:
    watch = backend.watch("/api/v1/namespaces?watch=true")
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
