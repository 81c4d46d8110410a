"""KubeStore watches over real HTTP: delivery, resuming across streams, 410, stop, failures."""

from __future__ import annotations

import dataclasses
import queue
import time
from collections.abc import Callable

import pytest

from bundler.api.resources import BUNDLE, HELM_RELEASE
from bundler.apiserver import ApiServer, Verb
from bundler.kube.store import KubeStore
from bundler.store.errors import Gone, KindNotServed, Unavailable
from bundler.store.protocol import Watch, WatchEvent
from tests.support.kube.store_client import FAST, PATIENCE, Recorder, bundle, summary


def wait_until(condition: Callable[[], bool]) -> None:
    """Poll `condition` until it holds; fail the test if it never does."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        time.sleep(0.02)


def test_watch_delivers_events_after_the_resource_version(
    store: KubeStore, recorder: Recorder, watches: list[Watch]
) -> None:
    store.create(BUNDLE, bundle("before"))
    start = store.list(BUNDLE, "ws").resource_version
    watches.append(store.watch(BUNDLE, recorder.on_event, namespace="ws", resource_version=start))
    created = store.create(BUNDLE, bundle("a"))
    store.patch(BUNDLE, "a", {"spec": {"paused": True}}, "ws")
    store.delete(BUNDLE, "a", "ws")
    assert recorder.next_events(3) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert created["metadata"]["uid"]


def test_watch_without_resource_version_starts_now(
    store: KubeStore, recorder: Recorder, watches: list[Watch]
) -> None:
    store.create(BUNDLE, bundle("old"))
    watches.append(store.watch(BUNDLE, recorder.on_event, namespace="ws"))
    store.create(BUNDLE, bundle("new"))
    assert recorder.next_events(1) == [("ADDED", "new")]


def test_watch_filters_by_namespace_and_labels(
    store: KubeStore, recorder: Recorder, watches: list[Watch]
) -> None:
    watches.append(store.watch(BUNDLE, recorder.on_event, namespace="ws", labels={"env": "prod"}))
    store.create(BUNDLE, bundle("dev", env="dev"))
    store.create(BUNDLE, bundle("elsewhere", namespace="other", env="prod"))
    store.create(BUNDLE, bundle("prod", env="prod"))
    assert recorder.next_events(1) == [("ADDED", "prod")]
    assert recorder.events.empty()


def test_watch_resumes_across_server_timeouts_without_losing_events(
    server: ApiServer, connect: Callable[..., KubeStore], watches: list[Watch]
) -> None:
    store = connect(dataclasses.replace(FAST, watch_timeout_seconds=1))
    recorder = Recorder()
    watches.append(store.watch(BUNDLE, recorder.on_event, namespace="ws"))
    server.reset_counts()
    created: list[str] = []
    # Keep writing until the server has ended at least two streams, so some writes land while
    # the watch is between streams.
    while server.request_counts()[Verb.WATCH] < 3:
        created.append(f"b{len(created)}")
        store.create(BUNDLE, bundle(created[-1]))
        time.sleep(0.05)
    assert recorder.next_events(len(created)) == [("ADDED", name) for name in created]
    store.create(BUNDLE, bundle("last"))
    assert recorder.next_events(1) == [("ADDED", "last")]
    assert recorder.events.empty()


def test_watch_survives_a_dropped_stream(
    server: ApiServer, store: KubeStore, recorder: Recorder, watches: list[Watch]
) -> None:
    watches.append(store.watch(BUNDLE, recorder.on_event, namespace="ws"))
    store.create(BUNDLE, bundle("before"))
    assert recorder.next_events(1) == [("ADDED", "before")]
    server.reset_counts()
    server.store.fail_watches(Unavailable("dropped"))
    wait_until(lambda: server.request_counts()[Verb.WATCH] >= 1)
    store.create(BUNDLE, bundle("after"))
    assert recorder.next_events(1) == [("ADDED", "after")]


@pytest.mark.parametrize("via", ["http-410", "error-event"], ids=["http-410", "error-event-410"])
def test_too_old_resource_version_reports_gone(
    server: ApiServer, store: KubeStore, recorder: Recorder, watches: list[Watch], via: str
) -> None:
    old = store.create(BUNDLE, bundle("a"))["metadata"]["resourceVersion"]
    if via == "http-410":
        server.inject_failure(410, verb=Verb.WATCH, resource=BUNDLE)
    else:
        store.create(BUNDLE, bundle("b"))
        server.store.compact_history()
    watches.append(
        store.watch(
            BUNDLE,
            recorder.on_event,
            namespace="ws",
            resource_version=old,
            on_error=recorder.on_error,
        )
    )
    assert isinstance(recorder.next_error(), Gone)
    assert recorder.events.empty()


def test_stop_ends_the_watch_and_its_callbacks(
    server: ApiServer, store: KubeStore, recorder: Recorder
) -> None:
    watch = store.watch(BUNDLE, recorder.on_event, namespace="ws", on_error=recorder.on_error)
    store.create(BUNDLE, bundle("a"))
    assert recorder.next_events(1) == [("ADDED", "a")]
    watch.stop()
    store.create(BUNDLE, bundle("b"))
    with pytest.raises(queue.Empty):
        recorder.events.get(timeout=0.3)
    assert recorder.errors.empty()


def test_stop_from_inside_a_callback(store: KubeStore, watches: list[Watch]) -> None:
    seen: list[str] = []
    holder: list[Watch] = []

    def stop_on_first(event: WatchEvent) -> None:
        seen.append(summary(event)[1])
        holder[0].stop()

    holder.append(store.watch(BUNDLE, stop_on_first, namespace="ws"))
    watches.append(holder[0])
    store.create(BUNDLE, bundle("a"))
    store.create(BUNDLE, bundle("b"))
    wait_until(lambda: seen == ["a"])
    time.sleep(0.3)  # room for "b" to arrive, which it must not
    assert seen == ["a"]


def test_kind_not_served(
    server: ApiServer, store: KubeStore, recorder: Recorder, watches: list[Watch]
) -> None:
    server.remove_resource(HELM_RELEASE)
    with pytest.raises(KindNotServed):
        store.watch(HELM_RELEASE, recorder.on_event, namespace="ws")
    watches.append(
        store.watch(
            HELM_RELEASE,
            recorder.on_event,
            namespace="ws",
            resource_version="1",
            on_error=recorder.on_error,
        )
    )
    assert isinstance(recorder.next_error(), KindNotServed)


def test_server_going_away_ends_the_watch_unavailable(
    server: ApiServer, store: KubeStore, recorder: Recorder, watches: list[Watch]
) -> None:
    watches.append(
        store.watch(BUNDLE, recorder.on_event, namespace="ws", on_error=recorder.on_error)
    )
    store.create(BUNDLE, bundle("a"))
    assert recorder.next_events(1) == [("ADDED", "a")]
    server.stop()
    assert isinstance(recorder.next_error(), Unavailable)


def test_closing_the_store_stops_its_watches(
    connect: Callable[..., KubeStore], recorder: Recorder
) -> None:
    watching, writing = connect(), connect()
    watching.watch(BUNDLE, recorder.on_event, namespace="ws", on_error=recorder.on_error)
    writing.create(BUNDLE, bundle("a"))
    assert recorder.next_events(1) == [("ADDED", "a")]
    watching.close()
    writing.create(BUNDLE, bundle("b"))
    with pytest.raises(queue.Empty):
        recorder.events.get(timeout=0.3)
    assert recorder.errors.empty()
