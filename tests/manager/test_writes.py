"""The write helpers: merge patches that turn what is into what should be, nothing sent when equal,
updates retried from a fresh read on 409."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import NAMESPACE, SECRET
from bundler.manager.writes import (
    create_or_update,
    merge_diff,
    patch_status_if_changed,
    status_patch,
    update_with_retry,
)
from bundler.store.errors import Conflict
from bundler.store.memory import MemoryStore
from bundler.store.mergepatch import merge_patch
from bundler.store.protocol import Obj
from tests.support.manager.world import CountingStore


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        ({"a": 1}, {"a": 1}, {}),
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1, "b": 2}, {"a": 1}, {"b": None}),
        ({"d": {"x": 1, "y": 2}}, {"d": {"x": 1}}, {"d": {"y": None}}),
        ({"l": [1, 2]}, {"l": [1]}, {"l": [1]}),
        (None, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": True}, {"a": 1}, {"a": 1}),
    ],
    ids=[
        "equal",
        "changed",
        "removed",
        "nested-removed",
        "list-replaced",
        "from-nothing",
        "bool-int",
    ],
)
def test_merge_diff(old: Any, new: Any, patch: Any) -> None:
    assert merge_diff(old, new) == patch
    assert merge_patch(old, merge_diff(old, new)) == new


@pytest.mark.parametrize(
    ("current", "owned", "patch"),
    [
        ({"agent": {"lastSeen": "t"}, "summary": {"ready": 1}}, {"summary": {"ready": 1}}, {}),
        ({"agent": {"lastSeen": "t"}}, {"summary": {"ready": 1}}, {"summary": {"ready": 1}}),
        (
            {"display": {"state": "Ready", "readyBundles": "1/1"}},
            {"display": {"readyBundles": "0/0"}},
            {"display": {"state": None, "readyBundles": "0/0"}},
        ),
        ({"resolvedVersion": "1.0.0"}, {"resolvedVersion": None}, {"resolvedVersion": None}),
        (None, {"namespace": "ns"}, {"namespace": "ns"}),
    ],
    ids=["unchanged", "others-untouched", "nested-key-removed", "field-removed", "no-status"],
)
def test_status_patch(current: Obj | None, owned: Obj, patch: Obj) -> None:
    assert status_patch(current, owned) == patch


def secret(name: str = "s", **data: str) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns"}, "stringData": data}


@pytest.fixture
def memory() -> MemoryStore:
    store = MemoryStore()
    store.create(NAMESPACE, {"metadata": {"name": "ns"}})
    return store


def set_label(value: str) -> Any:
    def mutate(obj: Obj) -> bool:
        labels = obj["metadata"].setdefault("labels", {})
        if labels.get("k") == value:
            return False
        labels["k"] = value
        return True

    return mutate


def test_update_with_retry_rereads_on_conflict(memory: MemoryStore) -> None:
    stale = memory.create(SECRET, secret())
    memory.patch(SECRET, "s", {"metadata": {"annotations": {"other": "writer"}}}, "ns")
    updated = update_with_retry(memory, SECRET, stale, set_label("v"))
    assert updated["metadata"]["labels"] == {"k": "v"}
    assert updated["metadata"]["annotations"] == {"other": "writer"}


def test_update_with_retry_gives_up_after_repeated_conflicts(memory: MemoryStore) -> None:
    observed = memory.create(SECRET, secret())
    calls = 0

    def racing(obj: Obj) -> bool:
        nonlocal calls
        calls += 1
        # Another writer gets in between every read and our update.
        memory.patch(SECRET, "s", {"metadata": {"annotations": {"n": str(calls)}}}, "ns")
        obj["metadata"]["labels"] = {"k": str(calls)}
        return True

    with pytest.raises(Conflict):
        update_with_retry(memory, SECRET, observed, racing)
    assert calls == 3


def test_nothing_is_sent_when_nothing_differs(memory: MemoryStore) -> None:
    counting = CountingStore(memory)
    observed = memory.create(SECRET, secret(labels="x"))
    observed = memory.update(
        SECRET, {**observed, "metadata": {**observed["metadata"], "labels": {"k": "v"}}}
    )
    assert update_with_retry(counting, SECRET, observed, set_label("v")) == observed
    assert create_or_update(counting, SECRET, secret(), observed, set_label("v")) is None
    assert not patch_status_if_changed(counting, SECRET, {**observed, "status": {"a": 1}}, {"a": 1})
    assert counting.total() == 0


def test_create_falls_back_to_update_when_it_already_exists(memory: MemoryStore) -> None:
    memory.create(SECRET, secret())
    written = create_or_update(memory, SECRET, secret(), None, set_label("v"))
    assert written is not None
    assert memory.get(SECRET, "s", "ns")["metadata"]["labels"] == {"k": "v"}
