"""MemoryStore watches: ordering, replay from a resourceVersion, Gone, filters, isolation."""

from __future__ import annotations

import threading

import pytest

from bundler.api.resources import BUNDLE, CLUSTER, NAMESPACE
from bundler.store.errors import Gone, Invalid
from bundler.store.memory import MemoryStore
from bundler.store.protocol import WatchEvent
from tests.support.store.memory_store import Recorder, bundle


def labelled(name: str, **labels: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "ws", "labels": labels}}


def test_watch_sees_every_write_in_order(store: MemoryStore) -> None:
    recorder = Recorder()
    store.watch(BUNDLE, recorder)
    store.create(BUNDLE, bundle("a"))
    store.patch(BUNDLE, "a", {"spec": {"x": 1}}, "ws")
    store.patch_status(BUNDLE, "a", {"status": {"ok": True}}, "ws")
    store.create(CLUSTER, bundle("not-a-bundle"))
    store.delete(BUNDLE, "a", "ws")
    assert recorder.seen == [("ADDED", "a"), ("MODIFIED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert recorder.versions == [1, 2, 3, 5]


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        ("1", [("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]),
        ("3", [("DELETED", "a")]),
        ("4", []),
        ("0", [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]),
        (None, []),
    ],
    ids=["from-first-write", "from-middle", "from-now", "zero-replays-all", "none-means-now"],
)
def test_watch_replays_history_after_the_resource_version(
    store: MemoryStore, since: str | None, expected: list[tuple[str, str]]
) -> None:
    store.create(BUNDLE, bundle("a"))
    store.patch(BUNDLE, "a", {"spec": {"x": 1}}, "ws")
    store.create(BUNDLE, bundle("b"))
    store.delete(BUNDLE, "a", "ws")
    recorder = Recorder()
    store.watch(BUNDLE, recorder, resource_version=since)
    assert recorder.seen == expected
    store.create(BUNDLE, bundle("c"))
    assert recorder.seen == [*expected, ("ADDED", "c")]


def test_watch_from_list_resource_version_misses_nothing(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a"))
    listed = store.list(BUNDLE)
    store.create(BUNDLE, bundle("b"))
    recorder = Recorder()
    store.watch(BUNDLE, recorder, resource_version=listed.resource_version)
    assert recorder.seen == [("ADDED", "b")]


def test_watch_from_a_version_older_than_history_is_gone() -> None:
    store = MemoryStore(history_size=2)
    for name in "abcd":
        store.create(BUNDLE, bundle(name))
    with pytest.raises(Gone, match="too old"):
        store.watch(BUNDLE, Recorder(), resource_version="1")
    recorder = Recorder()
    store.watch(BUNDLE, recorder, resource_version="2")
    assert recorder.seen == [("ADDED", "c"), ("ADDED", "d")]


def test_compacted_history_is_gone(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a"))
    store.create(BUNDLE, bundle("b"))
    store.compact_history()
    with pytest.raises(Gone):
        store.watch(BUNDLE, Recorder(), resource_version="1")
    store.watch(BUNDLE, Recorder(), resource_version="2")


def test_watch_rejects_a_malformed_resource_version(store: MemoryStore) -> None:
    with pytest.raises(Invalid):
        store.watch(BUNDLE, Recorder(), resource_version="abc")


def test_namespace_filter(store: MemoryStore) -> None:
    recorder = Recorder()
    store.watch(BUNDLE, recorder, namespace="ws")
    store.create(BUNDLE, bundle("in"))
    store.create(BUNDLE, bundle("out", "other"))
    assert recorder.seen == [("ADDED", "in")]


def test_label_filter_sees_objects_enter_and_leave(store: MemoryStore) -> None:
    recorder = Recorder()
    store.watch(BUNDLE, recorder, labels={"env": "prod"})
    store.create(BUNDLE, labelled("a", env="dev"))
    store.patch(BUNDLE, "a", {"metadata": {"labels": {"env": "prod"}}}, "ws")
    store.patch(BUNDLE, "a", {"spec": {"x": 1}}, "ws")
    store.patch(BUNDLE, "a", {"metadata": {"labels": {"env": "dev"}}}, "ws")
    store.patch(BUNDLE, "a", {"spec": {"x": 2}}, "ws")
    store.create(BUNDLE, labelled("b", env="prod"))
    store.delete(BUNDLE, "b", "ws")
    store.delete(BUNDLE, "a", "ws")
    assert recorder.seen == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("DELETED", "a"),
        ("ADDED", "b"),
        ("DELETED", "b"),
    ]


def test_label_filter_applies_to_replay(store: MemoryStore) -> None:
    store.create(BUNDLE, labelled("a", env="dev"))
    store.patch(BUNDLE, "a", {"metadata": {"labels": {"env": "prod"}}}, "ws")
    recorder = Recorder()
    store.watch(BUNDLE, recorder, labels={"env": "prod"}, resource_version="1")
    assert recorder.seen == [("ADDED", "a")]


def test_cluster_scoped_watch(store: MemoryStore) -> None:
    recorder = Recorder()
    store.watch(NAMESPACE, recorder, namespace="ignored")
    store.create(NAMESPACE, {"metadata": {"name": "ws"}})
    assert recorder.seen == [("ADDED", "ws")]


def test_stop_ends_delivery(store: MemoryStore) -> None:
    recorder = Recorder()
    watch = store.watch(BUNDLE, recorder)
    store.create(BUNDLE, bundle("a"))
    watch.stop()
    store.create(BUNDLE, bundle("b"))
    assert recorder.seen == [("ADDED", "a")]


def test_a_failing_handler_harms_nobody(store: MemoryStore) -> None:
    def explode(event: WatchEvent) -> None:
        raise RuntimeError("handler bug")

    recorder = Recorder()
    store.watch(BUNDLE, explode)
    store.watch(BUNDLE, recorder)
    store.create(BUNDLE, bundle("a"))
    store.create(BUNDLE, bundle("b"))
    assert recorder.seen == [("ADDED", "a"), ("ADDED", "b")]


def test_handlers_share_the_stored_object_and_cannot_change_it(store: MemoryStore) -> None:
    refused: list[Exception] = []

    def vandal(event: WatchEvent) -> None:
        try:
            event.object["spec"]["x"] = "vandalised"
        except TypeError as error:
            refused.append(error)

    recorder, other = Recorder(), Recorder()
    store.watch(BUNDLE, vandal)
    store.watch(BUNDLE, recorder)
    store.watch(BUNDLE, other)
    store.create(BUNDLE, bundle("a", spec={"x": 1}))
    assert len(refused) == 1
    assert recorder.events[0].object["spec"] == {"x": 1}
    assert recorder.events[0].object is other.events[0].object  # one object, no copies
    assert store.get(BUNDLE, "a", "ws")["spec"] == {"x": 1}


def test_writes_from_handlers_keep_every_watcher_in_order(store: MemoryStore) -> None:
    def react(event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        if event.type.value == "ADDED" and name == "a":
            store.patch_status(BUNDLE, name, {"status": {"seen": True}}, "ws")

    first, last = Recorder(), Recorder()
    store.watch(BUNDLE, first)
    store.watch(BUNDLE, react)
    store.watch(BUNDLE, last)
    store.create(BUNDLE, bundle("a"))
    assert first.versions == [1, 2]
    assert last.versions == [1, 2]


def test_handler_may_stop_its_own_watch(store: MemoryStore) -> None:
    seen: list[str] = []

    def once(event: WatchEvent) -> None:
        seen.append(event.object["metadata"]["name"])
        watch.stop()

    watch = store.watch(BUNDLE, once)
    store.create(BUNDLE, bundle("a"))
    store.create(BUNDLE, bundle("b"))
    assert seen == ["a"]


def test_fail_watches_calls_on_error_once(store: MemoryStore) -> None:
    errors: list[Exception] = []
    recorder = Recorder()
    store.watch(BUNDLE, recorder, on_error=errors.append)
    store.fail_watches(Gone("connection dropped"))
    store.create(BUNDLE, bundle("a"))
    assert [str(e) for e in errors] == ["connection dropped"]
    assert recorder.events == []


def test_concurrent_writers_are_delivered_in_resource_version_order(store: MemoryStore) -> None:
    recorder = Recorder()
    store.watch(BUNDLE, recorder)
    writers, writes = 4, 50

    def write(worker: int) -> None:
        for index in range(writes):
            store.create(BUNDLE, bundle(f"w{worker}-{index}"))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert recorder.versions == list(range(1, writers * writes + 1))
