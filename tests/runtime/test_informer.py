"""Informers: list fills the cache, watch keeps it current, a lost watch relists with a diff."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from bundler.runtime.clock import ManualClock
from bundler.runtime.informer import Informer
from bundler.runtime.timers import Timers
from bundler.store.errors import Gone, Unavailable
from bundler.store.memory import MemoryStore
from bundler.store.protocol import EventType, Obj, ObjectList
from tests.support.runtime.widgets import WAIT, WIDGET, widget

Seen = list[tuple[str, str]]


def recorder(informer: Informer) -> Seen:
    """Events of `informer` as (type, name), in order."""
    seen: Seen = []
    informer.add_handler(lambda kind, obj: seen.append((kind.value, obj["metadata"]["name"])))
    return seen


def settle(timers: Timers) -> None:
    assert timers.monitor.wait_for(timers.is_idle, WAIT)


class FlakyStore(MemoryStore):
    """A MemoryStore whose next `failing` lists raise Unavailable, like an unreachable server."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = 0
        self.lists = 0

    def list(
        self, res: Any, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> ObjectList:
        self.lists += 1
        if self.failing:
            self.failing -= 1
            raise Unavailable("connection refused", obj=str(res))
        return super().list(res, namespace, labels)


def test_start_lists_into_the_cache_and_reports_each_object_once(
    store: MemoryStore, timers: Timers
) -> None:
    for name in ["b", "a"]:
        store.create(WIDGET, widget(name))
    informer = Informer(store, WIDGET, timers)
    seen = recorder(informer)
    assert not informer.has_synced
    informer.start()
    assert informer.wait_for_sync(WAIT)
    assert seen == [("ADDED", "a"), ("ADDED", "b")]
    assert sorted(str(key) for key in informer.list_keys()) == ["default/a", "default/b"]


def test_watch_keeps_the_cache_current(store: MemoryStore, timers: Timers) -> None:
    informer = Informer(store, WIDGET, timers)
    informer.start()
    seen = recorder(informer)
    created = store.create(WIDGET, widget("a"))
    store.update(WIDGET, {**created, "spec": {"size": 2}})
    assert informer.get("default", "a") == store.get(WIDGET, "a", "default")
    store.delete(WIDGET, "a", "default")
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert (informer.get("default", "a"), len(informer)) == (None, 0)


def test_reads_are_copies(store: MemoryStore, timers: Timers) -> None:
    store.create(WIDGET, widget("a"))
    informer = Informer(store, WIDGET, timers)
    informer.start()
    got = informer.get("default", "a")
    assert got is not None
    got["spec"]["changed"] = True
    informer.list()[0]["spec"]["changed"] = True
    assert informer.get("default", "a") == store.get(WIDGET, "a", "default")


def test_views_are_the_cached_objects_and_read_only(store: MemoryStore, timers: Timers) -> None:
    store.create(WIDGET, widget("a"))
    informer = Informer(store, WIDGET, timers)
    informer.start()
    seen: list[object] = []
    informer.add_handler(lambda _, obj: seen.append(obj))
    store.patch(WIDGET, "a", {"spec": {"size": 2}}, "default")
    view = informer.view("default", "a")
    assert view is not None and view is seen[-1] and informer.views() == [view]
    with pytest.raises(TypeError, match="read-only"):
        view["spec"]["size"] = 3
    assert informer.get("default", "a") == store.get(WIDGET, "a", "default")


@pytest.mark.parametrize(
    ("namespace", "labels", "expected"),
    [
        (None, None, ["blue-1", "blue-2", "red-1"]),
        ("one", None, ["blue-1", "red-1"]),
        (None, {"color": "blue"}, ["blue-1", "blue-2"]),
        ("one", {"color": "blue"}, ["blue-1"]),
        ("three", None, []),
    ],
    ids=["all", "namespace", "labels", "namespace-and-labels", "empty-namespace"],
)
def test_list_filters_the_cache(
    store: MemoryStore,
    timers: Timers,
    namespace: str | None,
    labels: dict[str, str] | None,
    expected: list[str],
) -> None:
    store.create(WIDGET, widget("blue-1", "one", color="blue"))
    store.create(WIDGET, widget("red-1", "one", color="red"))
    store.create(WIDGET, widget("blue-2", "two", color="blue"))
    informer = Informer(store, WIDGET, timers)
    informer.start()
    found = informer.list(namespace=namespace, labels=labels)
    assert sorted(obj["metadata"]["name"] for obj in found) == expected


def test_a_scoped_informer_sees_only_its_namespace_and_labels(
    store: MemoryStore, timers: Timers
) -> None:
    informer = Informer(store, WIDGET, timers, namespace="one", labels={"color": "blue"})
    informer.start()
    seen = recorder(informer)
    store.create(WIDGET, widget("other-namespace", "two", color="blue"))
    store.create(WIDGET, widget("other-color", "one", color="red"))
    blue = store.create(WIDGET, widget("blue", "one", color="blue"))
    store.update(WIDGET, {**blue, "metadata": {**blue["metadata"], "labels": {"color": "red"}}})
    assert seen == [("ADDED", "blue"), ("DELETED", "blue")]
    assert len(informer) == 0


def by_color(obj: Mapping[str, Any]) -> str | None:
    color: str | None = (obj["metadata"].get("labels") or {}).get("color")
    return color


def indexed_names(informer: Informer, value: str) -> list[str]:
    return [obj["metadata"]["name"] for obj in informer.indexed(value)]


def test_the_index_follows_adds_changes_and_deletes(store: MemoryStore, timers: Timers) -> None:
    store.create(WIDGET, widget("blue-1", color="blue"))
    informer = Informer(store, WIDGET, timers, index=by_color)
    informer.start()
    blue = store.create(WIDGET, widget("blue-2", color="blue"))
    store.create(WIDGET, widget("plain"))
    assert indexed_names(informer, "blue") == ["blue-1", "blue-2"]
    store.update(WIDGET, {**blue, "metadata": {**blue["metadata"], "labels": {"color": "red"}}})
    assert (indexed_names(informer, "blue"), indexed_names(informer, "red")) == (
        ["blue-1"],
        ["blue-2"],
    )
    store.delete(WIDGET, "blue-1", "default")
    assert (indexed_names(informer, "blue"), indexed_names(informer, "green")) == ([], [])
    with pytest.raises(TypeError):
        informer.indexed("red")[0]["spec"]["size"] = 1


def test_an_object_keeps_its_place_in_the_index_as_in_the_cache(
    store: MemoryStore, timers: Timers
) -> None:
    for name in ["a", "b"]:
        store.create(WIDGET, widget(name, color="blue"))
    informer = Informer(store, WIDGET, timers, index=by_color)
    informer.start()
    a = store.get(WIDGET, "a", "default")
    store.update(WIDGET, {**a, "spec": {"size": 2}})
    assert indexed_names(informer, "blue") == ["a", "b"]
    assert [obj["metadata"]["name"] for obj in informer.views()] == ["a", "b"]


def test_a_relist_rebuilds_the_index(clock: ManualClock) -> None:
    store = MemoryStore()
    timers = Timers(clock)
    for name in ["a", "b"]:
        store.create(WIDGET, widget(name, color="blue"))
    informer = Informer(store, WIDGET, timers, index=by_color)
    informer.start()
    store.compact_history()
    store.fail_watches(Gone("too old", obj="watch"))
    b = store.get(WIDGET, "b", "default")
    store.update(WIDGET, {**b, "metadata": {**b["metadata"], "labels": {"color": "red"}}})
    store.delete(WIDGET, "a", "default")
    store.create(WIDGET, widget("c", color="blue"))
    timers.start()
    try:
        settle(timers)
        assert (indexed_names(informer, "blue"), indexed_names(informer, "red")) == (["c"], ["b"])
    finally:
        timers.stop(WAIT)


def test_a_late_handler_gets_the_cache_replayed(store: MemoryStore, timers: Timers) -> None:
    store.create(WIDGET, widget("a"))
    informer = Informer(store, WIDGET, timers)
    informer.start()
    assert recorder(informer) == [("ADDED", "a")]


def test_lost_watch_relists_and_reports_what_changed_meanwhile(clock: ManualClock) -> None:
    store = MemoryStore()
    timers = Timers(clock)  # not started yet: the relist waits until the test has made changes
    for name in ["a", "b", "c"]:
        store.create(WIDGET, widget(name))
    informer = Informer(store, WIDGET, timers)
    informer.start()
    seen = recorder(informer)
    seen.clear()
    store.compact_history()
    store.fail_watches(Gone("too old", obj="watch"))
    b = store.get(WIDGET, "b", "default")
    store.update(WIDGET, {**b, "spec": {"size": 3}})
    store.delete(WIDGET, "c", "default")
    store.create(WIDGET, widget("d"))
    assert seen == [], "no watch is running"
    timers.start()
    try:
        settle(timers)
        assert seen == [("MODIFIED", "b"), ("ADDED", "d"), ("DELETED", "c")]
        store.create(WIDGET, widget("e"))
        assert seen[-1] == ("ADDED", "e"), "a new watch runs from the relist"
        assert informer.get("default", "b") == store.get(WIDGET, "b", "default")
    finally:
        timers.stop(WAIT)


def test_failing_relists_back_off(clock: ManualClock, timers: Timers) -> None:
    store = FlakyStore()
    informer = Informer(store, WIDGET, timers)
    informer.start()
    seen = recorder(informer)
    store.failing = 2
    store.fail_watches(Gone("too old", obj="watch"))
    store.create(WIDGET, widget("a"))
    settle(timers)
    assert store.lists == 2, "the first relist runs at once, and fails"
    clock.advance(0.8)
    settle(timers)
    assert store.lists == 3, "the second waits 0.8s, and fails"
    clock.advance(1.5)
    settle(timers)
    assert (store.lists, seen) == (3, [])
    clock.advance(0.2)
    settle(timers)
    assert (store.lists, seen) == (4, [("ADDED", "a")]), "the third waits 1.6s, and succeeds"


def test_stopped_informer_calls_no_handler(store: MemoryStore, timers: Timers) -> None:
    informer = Informer(store, WIDGET, timers)
    informer.start()
    seen = recorder(informer)
    informer.stop()
    store.create(WIDGET, widget("a"))
    store.fail_watches(Gone("too old", obj="watch"))
    settle(timers)
    assert seen == []


def test_a_failing_handler_does_not_starve_the_others(store: MemoryStore, timers: Timers) -> None:
    informer = Informer(store, WIDGET, timers)
    informer.start()

    def broken(kind: EventType, obj: Obj) -> None:
        raise RuntimeError("handler bug")

    informer.add_handler(broken)
    seen = recorder(informer)
    store.create(WIDGET, widget("a"))
    assert seen == [("ADDED", "a")]


def test_start_fails_when_the_first_list_fails(timers: Timers) -> None:
    store = FlakyStore()
    store.failing = 1
    informer = Informer(store, WIDGET, timers)
    with pytest.raises(Unavailable):
        informer.start()
    informer.start()
    assert informer.has_synced
