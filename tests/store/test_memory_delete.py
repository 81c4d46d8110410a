"""MemoryStore deletion: finalizers, deletionTimestamp, cascades by owner and by namespace."""

from __future__ import annotations

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, HELM_RELEASE, NAMESPACE, SECRET
from bundler.store.errors import Forbidden, Invalid, NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.store.memory_store import Recorder, bundle


def owned_by(owner: Obj, name: str, namespace: str = "ws") -> Obj:
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": [ref]}}


def names(store: MemoryStore, res: object = BUNDLE_DEPLOYMENT) -> list[str]:
    return [o["metadata"]["name"] for o in store.list(res).items]  # type: ignore[arg-type]


def test_delete_without_finalizers_removes_at_once(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a"))
    recorder = Recorder()
    store.watch(BUNDLE, recorder)
    store.delete(BUNDLE, "a", "ws")
    assert recorder.seen == [("DELETED", "a")]
    assert recorder.versions == [2]
    with pytest.raises(NotFound):
        store.get(BUNDLE, "a", "ws")
    with pytest.raises(NotFound):
        store.delete(BUNDLE, "a", "ws")


def test_finalizers_hold_the_object_until_removed(store: MemoryStore) -> None:
    store.create(
        BUNDLE, bundle("a", metadata={"name": "a", "namespace": "ws", "finalizers": ["f1", "f2"]})
    )
    recorder = Recorder()
    store.watch(BUNDLE, recorder)
    store.delete(BUNDLE, "a", "ws")
    marked = store.get(BUNDLE, "a", "ws")
    assert marked["metadata"]["deletionTimestamp"] == "2024-05-06T07:08:09Z"
    assert marked["metadata"]["generation"] == 2
    store.delete(BUNDLE, "a", "ws")  # a second delete changes nothing
    store.patch(BUNDLE, "a", {"metadata": {"finalizers": ["f2"]}}, "ws")
    assert store.get(BUNDLE, "a", "ws")["metadata"]["finalizers"] == ["f2"]
    last = store.get(BUNDLE, "a", "ws")
    last["metadata"]["finalizers"] = []
    store.update(BUNDLE, last)
    assert recorder.seen == [("MODIFIED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert names(store, BUNDLE) == []


def test_no_new_finalizers_once_deleting(store: MemoryStore) -> None:
    store.create(
        BUNDLE, bundle("a", metadata={"name": "a", "namespace": "ws", "finalizers": ["f1"]})
    )
    store.delete(BUNDLE, "a", "ws")
    with pytest.raises(Invalid, match="no new finalizers"):
        store.patch(BUNDLE, "a", {"metadata": {"finalizers": ["f1", "f2"]}}, "ws")


def test_delete_object_returns_what_the_deletion_left(store: MemoryStore) -> None:
    store.create(
        BUNDLE, bundle("held", metadata={"name": "held", "namespace": "ws", "finalizers": ["f"]})
    )
    store.create(BUNDLE, bundle("free"))
    assert store.delete_object(BUNDLE, "held", "ws")["metadata"]["deletionTimestamp"]
    assert store.delete_object(BUNDLE, "free", "ws")["metadata"]["resourceVersion"] == "4"


def test_owner_deletion_cascades_to_dependents(store: MemoryStore) -> None:
    owner = store.create(BUNDLE, bundle("app"))
    child = store.create(BUNDLE_DEPLOYMENT, owned_by(owner, "child", "cluster-ns"))
    store.create(HELM_RELEASE, owned_by(child, "grandchild", "cluster-ns"))
    store.create(BUNDLE_DEPLOYMENT, bundle("unrelated", "cluster-ns"))
    store.delete(BUNDLE, "app", "ws")
    assert names(store) == ["unrelated"]
    assert names(store, HELM_RELEASE) == []


def test_cascade_waits_for_the_owner_to_be_gone(store: MemoryStore) -> None:
    owner = store.create(
        BUNDLE, bundle("app", metadata={"name": "app", "namespace": "ws", "finalizers": ["f"]})
    )
    store.create(BUNDLE_DEPLOYMENT, owned_by(owner, "child"))
    store.delete(BUNDLE, "app", "ws")
    assert names(store) == ["child"]
    store.patch(BUNDLE, "app", {"metadata": {"finalizers": None}}, "ws")
    assert names(store) == []


def test_cascade_honours_dependent_finalizers_and_other_owners(store: MemoryStore) -> None:
    first = store.create(BUNDLE, bundle("first"))
    second = store.create(BUNDLE, bundle("second"))
    held = owned_by(first, "held")
    held["metadata"]["finalizers"] = ["flux"]
    store.create(BUNDLE_DEPLOYMENT, held)
    shared = owned_by(first, "shared")
    shared["metadata"]["ownerReferences"] += owned_by(second, "x")["metadata"]["ownerReferences"]
    store.create(BUNDLE_DEPLOYMENT, shared)
    store.delete(BUNDLE, "first", "ws")
    assert names(store) == ["held", "shared"]
    assert store.get(BUNDLE_DEPLOYMENT, "held", "ws")["metadata"]["deletionTimestamp"]
    store.delete(BUNDLE, "second", "ws")
    assert names(store) == ["held"]


def test_dropping_an_owner_reference_stops_the_cascade(store: MemoryStore) -> None:
    owner = store.create(BUNDLE, bundle("app"))
    store.create(BUNDLE_DEPLOYMENT, owned_by(owner, "child"))
    store.patch(BUNDLE_DEPLOYMENT, "child", {"metadata": {"ownerReferences": None}}, "ws")
    store.delete(BUNDLE, "app", "ws")
    assert names(store) == ["child"]


def test_namespace_deletion_deletes_its_content_then_itself(store: MemoryStore) -> None:
    store.create(NAMESPACE, {"metadata": {"name": "ws"}})
    store.create(BUNDLE, bundle("a"))
    store.create(SECRET, bundle("s"))
    store.create(BUNDLE, bundle("other", "elsewhere"))
    recorder = Recorder()
    store.watch(NAMESPACE, recorder)
    store.delete(NAMESPACE, "ws")
    assert names(store, BUNDLE) == ["other"]
    assert names(store, SECRET) == []
    assert recorder.seen == [("MODIFIED", "ws"), ("DELETED", "ws")]
    assert recorder.events[0].object["status"] == {"phase": "Terminating"}


def test_empty_namespace_is_removed_at_once(store: MemoryStore) -> None:
    store.create(NAMESPACE, {"metadata": {"name": "ws"}})
    assert store.delete_object(NAMESPACE, "ws")["status"] == {"phase": "Active"}
    assert names(store, NAMESPACE) == []


def test_namespace_terminates_until_content_finalizers_are_removed(store: MemoryStore) -> None:
    store.create(NAMESPACE, {"metadata": {"name": "ws"}})
    store.create(
        HELM_RELEASE,
        bundle("hr", metadata={"name": "hr", "namespace": "ws", "finalizers": ["flux"]}),
    )
    store.delete(NAMESPACE, "ws")
    namespace = store.get(NAMESPACE, "ws")
    assert namespace["status"] == {"phase": "Terminating"}
    with pytest.raises(Forbidden, match="being terminated"):
        store.create(BUNDLE, bundle("late"))
    store.patch(HELM_RELEASE, "hr", {"metadata": {"finalizers": None}}, "ws")
    assert names(store, HELM_RELEASE) == []
    assert names(store, NAMESPACE) == []


def test_namespace_with_its_own_finalizer_waits_for_it(store: MemoryStore) -> None:
    store.create(NAMESPACE, {"metadata": {"name": "ws", "finalizers": ["custom"]}})
    store.create(BUNDLE, bundle("a"))
    store.delete(NAMESPACE, "ws")
    assert names(store, BUNDLE) == []
    assert store.get(NAMESPACE, "ws")["status"] == {"phase": "Terminating"}
    store.patch(NAMESPACE, "ws", {"metadata": {"finalizers": None}})
    assert names(store, NAMESPACE) == []
