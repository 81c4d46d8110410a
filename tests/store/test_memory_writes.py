"""MemoryStore create/get/list/update/patch against the Kubernetes API server's contract."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER, NAMESPACE, ROLE, SECRET
from bundler.store.errors import (
    AlreadyExists,
    Conflict,
    Forbidden,
    Invalid,
    KindNotServed,
    NotFound,
)
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.store.memory_store import Recorder, bundle


def test_create_fills_server_metadata(store: MemoryStore) -> None:
    created = store.create(BUNDLE, bundle("podinfo", spec={"a": 1}))
    meta = created["metadata"]
    assert created["apiVersion"] == "bundler.dev/v1alpha1"
    assert created["kind"] == "Bundle"
    assert meta["creationTimestamp"] == "2024-05-06T07:08:09Z"
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == "1"
    assert len(meta["uid"]) == 36
    assert store.get(BUNDLE, "podinfo", "ws") == created


def test_uids_are_version_4_uuids_unique_within_and_across_stores(store: MemoryStore) -> None:
    other = MemoryStore()
    uids = [store.create(BUNDLE, bundle(f"b{i}"))["metadata"]["uid"] for i in range(50)]
    uids += [other.create(CLUSTER, bundle(f"c{i}"))["metadata"]["uid"] for i in range(50)]
    assert len(set(uids)) == 100
    assert all(uuid.UUID(uid).version == 4 for uid in uids)


def test_resource_version_is_global_and_monotonic(store: MemoryStore) -> None:
    versions = [
        store.create(BUNDLE, bundle("a"))["metadata"]["resourceVersion"],
        store.create(CLUSTER, bundle("c"))["metadata"]["resourceVersion"],
        store.patch(BUNDLE, "a", {"spec": {"x": 1}}, "ws")["metadata"]["resourceVersion"],
        store.patch_status(CLUSTER, "c", {"status": {"y": 1}}, "ws")["metadata"]["resourceVersion"],
    ]
    assert [int(v) for v in versions] == [1, 2, 3, 4]
    assert store.list(BUNDLE).resource_version == "4"


def test_create_twice_is_already_exists(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a"))
    with pytest.raises(AlreadyExists, match="ws/a"):
        store.create(BUNDLE, bundle("a"))


@pytest.mark.parametrize(
    ("res", "obj", "field"),
    [
        (BUNDLE, {"metadata": {"namespace": "ws"}}, "metadata.name"),
        (BUNDLE, {"metadata": {"name": "Upper", "namespace": "ws"}}, "metadata.name"),
        (BUNDLE, {"metadata": {"name": "a_b", "namespace": "ws"}}, "metadata.name"),
        (BUNDLE, {"metadata": {"name": "x" * 254, "namespace": "ws"}}, "metadata.name"),
        (BUNDLE, {"metadata": {"name": "a", "namespace": "a.b"}}, "metadata.namespace"),
        (NAMESPACE, {"metadata": {"name": "a.b"}}, "metadata.name"),
        (BUNDLE, {"metadata": {"name": "a"}}, None),
        (BUNDLE, {"spec": {}}, "metadata"),
        (
            BUNDLE,
            bundle("a") | {"metadata": {"name": "a", "namespace": "ws", "labels": {"k": 1}}},
            "metadata.labels",
        ),
        (
            BUNDLE,
            {"metadata": {"name": "a", "namespace": "ws", "labels": {"-k": "v"}}},
            "metadata.labels['-k']",
        ),
        (
            BUNDLE,
            {"metadata": {"name": "a", "namespace": "ws", "labels": {"k": "v v"}}},
            "metadata.labels['k']",
        ),
        (
            BUNDLE,
            {"metadata": {"name": "a", "namespace": "ws", "finalizers": "x"}},
            "metadata.finalizers",
        ),
        (
            BUNDLE,
            {"metadata": {"name": "a", "namespace": "ws", "ownerReferences": [{"uid": "u"}]}},
            "metadata.ownerReferences[0]",
        ),
        (ROLE, {"metadata": {"name": "a/b", "namespace": "ws"}}, None),
    ],
    ids=[
        "missing-name",
        "uppercase-name",
        "underscore-name",
        "name-too-long",
        "namespace-not-a-label",
        "namespace-object-name-not-a-label",
        "missing-namespace",
        "missing-metadata",
        "label-value-not-string",
        "label-key-invalid",
        "label-value-invalid",
        "finalizers-not-list",
        "owner-reference-incomplete",
        "rbac-name-with-slash",
    ],
)
def test_create_rejects_invalid_metadata(
    store: MemoryStore, res: Any, obj: Obj, field: str | None
) -> None:
    with pytest.raises(Invalid) as raised:
        store.create(res, obj)
    assert raised.value.field == field


def test_rbac_names_may_contain_colons(store: MemoryStore) -> None:
    assert store.create(ROLE, bundle("system:agent"))["metadata"]["name"] == "system:agent"


def test_generate_name_appends_a_suffix(store: MemoryStore) -> None:
    created = store.create(BUNDLE, {"metadata": {"generateName": "job-", "namespace": "ws"}})
    name = created["metadata"]["name"]
    assert name.startswith("job-")
    assert len(name) == len("job-") + 5


def test_cluster_scoped_objects_lose_their_namespace(store: MemoryStore) -> None:
    created = store.create(NAMESPACE, {"metadata": {"name": "ws", "namespace": "other"}})
    assert "namespace" not in created["metadata"]
    assert created["status"] == {"phase": "Active"}
    assert store.get(NAMESPACE, "ws")["metadata"]["name"] == "ws"


def test_create_drops_status_of_status_subresource_kinds(store: MemoryStore) -> None:
    created = store.create(BUNDLE, bundle("a", status={"ready": True}))
    assert "status" not in created


def test_secret_string_data_is_folded_into_data(store: MemoryStore) -> None:
    secret = {"metadata": {"name": "s", "namespace": "ws"}, "stringData": {"value": "kubeconfig"}}
    created = store.create(SECRET, secret)
    assert "stringData" not in created
    assert base64.b64decode(created["data"]["value"]) == b"kubeconfig"
    assert created["type"] == "Opaque"


@pytest.mark.parametrize(
    ("require", "setup", "error"),
    [
        (True, [], NotFound),
        (False, [{"metadata": {"name": "ws", "finalizers": ["hold"]}}], Forbidden),
    ],
    ids=["missing-namespace-required", "terminating-namespace"],
)
def test_create_needs_an_open_namespace(require: bool, setup: list[Obj], error: type) -> None:
    store = MemoryStore(require_namespaces=require)
    for namespace in setup:
        store.create(NAMESPACE, namespace)
        store.delete(NAMESPACE, namespace["metadata"]["name"])
    with pytest.raises(error, match="namespace 'ws'"):
        store.create(BUNDLE, bundle("a"))


def test_required_namespace_that_exists_accepts_objects() -> None:
    store = MemoryStore(require_namespaces=True)
    store.create(NAMESPACE, {"metadata": {"name": "ws"}})
    assert store.create(BUNDLE, bundle("a"))["metadata"]["namespace"] == "ws"


def test_unserved_kinds_are_refused() -> None:
    store = MemoryStore(served=[BUNDLE])
    store.create(BUNDLE, bundle("a"))
    with pytest.raises(KindNotServed):
        store.list(CLUSTER)
    with pytest.raises(KindNotServed):
        store.create(CLUSTER, bundle("a"))


def test_get_missing_is_not_found(store: MemoryStore) -> None:
    with pytest.raises(NotFound, match="ws/missing"):
        store.get(BUNDLE, "missing", "ws")


def test_what_a_writer_keeps_is_never_stored(store: MemoryStore) -> None:
    body = bundle("a", spec={"values": {"x": 1}, "list": [{"y": 1}]})
    store.create(BUNDLE, body)
    body["spec"]["values"]["x"] = 2
    body["metadata"]["labels"] = {"changed": "yes"}
    update = store.get(BUNDLE, "a", "ws")
    update["spec"]["list"][0]["y"] = 2
    store.update(BUNDLE, update)
    patch = {"spec": {"values": {"z": {"deep": 1}}}}
    store.patch(BUNDLE, "a", patch, "ws")
    update["spec"]["list"][0]["y"] = 3
    patch["spec"]["values"]["z"]["deep"] = 2
    stored = store.get(BUNDLE, "a", "ws")
    assert stored["spec"] == {"values": {"x": 1, "z": {"deep": 1}}, "list": [{"y": 2}]}
    assert "labels" not in stored["metadata"]


def test_returned_objects_are_copies(store: MemoryStore) -> None:
    created = store.create(BUNDLE, bundle("a", spec={"values": {"x": 1}}))
    created["spec"]["values"]["x"] = 2
    store.get(BUNDLE, "a", "ws")["spec"]["values"]["x"] = 3
    store.list(BUNDLE).items[0]["spec"]["values"]["x"] = 4
    assert store.get(BUNDLE, "a", "ws")["spec"]["values"] == {"x": 1}


@pytest.mark.parametrize(
    ("namespace", "labels", "expected"),
    [
        (None, None, ["ws/a", "ws/b", "ws2/a"]),
        ("ws", None, ["ws/a", "ws/b"]),
        (None, {"env": "prod"}, ["ws/a", "ws2/a"]),
        ("ws2", {"env": "prod"}, ["ws2/a"]),
        (None, {"env": "prod", "region": "eu"}, ["ws/a"]),
        (None, {"env": "dev"}, []),
        ("nowhere", None, []),
    ],
    ids=[
        "all",
        "one-namespace",
        "label",
        "namespace-and-label",
        "two-labels",
        "no-match",
        "empty-namespace",
    ],
)
def test_list_filters_by_namespace_and_labels(
    store: MemoryStore, namespace: str | None, labels: dict[str, str] | None, expected: list[str]
) -> None:
    store.create(BUNDLE, {"metadata": {"name": "b", "namespace": "ws"}})
    store.create(BUNDLE, {"metadata": {"name": "a", "namespace": "ws2", "labels": {"env": "prod"}}})
    store.create(
        BUNDLE,
        {"metadata": {"name": "a", "namespace": "ws", "labels": {"env": "prod", "region": "eu"}}},
    )
    found = store.list(BUNDLE, namespace, labels)
    assert [
        f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in found.items
    ] == expected
    assert found.resource_version == "3"


def _set(path: str, value: Any) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        *parents, leaf = path.split(".")
        target = obj
        for key in parents:
            target = target.setdefault(key, {})
        target[leaf] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "bumps"),
    [
        (_set("spec.replicas", 2), True),
        (_set("data", {"k": "v"}), True),
        (_set("metadata.labels", {"env": "prod"}), False),
        (_set("metadata.annotations", {"note": "x"}), False),
        (_set("metadata.finalizers", ["keep"]), False),
        (_set("status.ready", True), False),
    ],
    ids=["spec", "other-top-level-field", "labels", "annotations", "finalizers", "status-ignored"],
)
def test_update_bumps_generation_only_for_spec_changes(
    store: MemoryStore, edit: Callable[[Obj], None], bumps: bool
) -> None:
    current = store.create(BUNDLE, bundle("a", spec={"replicas": 1}))
    edit(current)
    updated = store.update(BUNDLE, current)
    assert updated["metadata"]["generation"] == (2 if bumps else 1)


def test_update_ignores_status_and_server_metadata(store: MemoryStore) -> None:
    created = store.create(BUNDLE, bundle("a", spec={"x": 1}))
    store.patch_status(BUNDLE, "a", {"status": {"ready": True}}, "ws")
    body = bundle("a", spec={"x": 2}, status={"ready": False})
    body["metadata"].update(uid="forged", generation=7, creationTimestamp="1999-01-01T00:00:00Z")
    updated = store.update(BUNDLE, body)
    assert updated["status"] == {"ready": True}
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["generation"] == 2
    assert updated["metadata"]["creationTimestamp"] == "2024-05-06T07:08:09Z"


def test_update_with_stale_resource_version_conflicts(store: MemoryStore) -> None:
    first = store.create(BUNDLE, bundle("a", spec={"x": 1}))
    store.patch(BUNDLE, "a", {"spec": {"x": 2}}, "ws")
    first["spec"]["x"] = 3
    with pytest.raises(Conflict, match="ws/a"):
        store.update(BUNDLE, first)
    with pytest.raises(Conflict):
        store.update_status(BUNDLE, first | {"status": {"y": 1}})
    assert store.get(BUNDLE, "a", "ws")["spec"] == {"x": 2}


def test_update_without_resource_version_is_unconditional(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a", spec={"x": 1}))
    assert store.update(BUNDLE, bundle("a", spec={"x": 2}))["spec"] == {"x": 2}


@pytest.mark.parametrize(
    "write",
    ["update", "update_status", "patch", "patch_status"],
    ids=["update", "update-status", "patch", "patch-status"],
)
def test_writes_to_missing_objects_are_not_found(store: MemoryStore, write: str) -> None:
    with pytest.raises(NotFound):
        if write.startswith("update"):
            getattr(store, write)(BUNDLE, bundle("missing"))
        else:
            getattr(store, write)(BUNDLE, "missing", {"spec": {}}, "ws")


def test_update_status_changes_only_status(store: MemoryStore) -> None:
    created = store.create(BUNDLE, bundle("a", spec={"x": 1}))
    created["metadata"]["labels"] = {"ignored": "yes"}
    created["spec"] = {"x": 99}
    created["status"] = {"observedGeneration": 1}
    updated = store.update_status(BUNDLE, created)
    assert updated["status"] == {"observedGeneration": 1}
    assert updated["spec"] == {"x": 1}
    assert "labels" not in updated["metadata"]
    assert updated["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    ("patch", "expected_spec"),
    [
        ({"spec": {"b": 3}}, {"a": {"x": 1, "y": 2}, "b": 3}),
        ({"spec": {"a": {"y": None}}}, {"a": {"x": 1}}),
        ({"spec": {"a": None}}, {}),
        ({"spec": {"a": [1, 2]}}, {"a": [1, 2]}),
    ],
    ids=["add-field", "null-deletes-nested", "null-deletes-subtree", "list-replaces"],
)
def test_patch_is_a_json_merge_patch(
    store: MemoryStore, patch: dict[str, Any], expected_spec: dict[str, Any]
) -> None:
    store.create(BUNDLE, bundle("a", spec={"a": {"x": 1, "y": 2}}))
    assert store.patch(BUNDLE, "a", patch, "ws")["spec"] == expected_spec


def test_patch_ignores_status_and_patch_status_ignores_the_rest(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a", spec={"x": 1}))
    patched = store.patch(BUNDLE, "a", {"spec": {"x": 2}, "status": {"ready": True}}, "ws")
    assert "status" not in patched
    assert patched["metadata"]["generation"] == 2
    status = store.patch_status(BUNDLE, "a", {"spec": {"x": 3}, "status": {"ready": True}}, "ws")
    assert status["spec"] == {"x": 2}
    assert status["status"] == {"ready": True}
    assert status["metadata"]["generation"] == 2
    cleared = store.patch_status(BUNDLE, "a", {"status": {"ready": None}}, "ws")
    assert cleared["status"] == {}


def test_patch_with_resource_version_is_optimistic(store: MemoryStore) -> None:
    created = store.create(BUNDLE, bundle("a", spec={"x": 1}))
    rv = created["metadata"]["resourceVersion"]
    store.patch(BUNDLE, "a", {"metadata": {"resourceVersion": rv}, "spec": {"x": 2}}, "ws")
    with pytest.raises(Conflict):
        store.patch(BUNDLE, "a", {"metadata": {"resourceVersion": rv}, "spec": {"x": 3}}, "ws")


def test_patch_cannot_rename(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a"))
    with pytest.raises(Invalid, match="name cannot change"):
        store.patch(BUNDLE, "a", {"metadata": {"name": "b"}}, "ws")


@pytest.mark.parametrize(
    "write",
    [
        lambda s, o: s.update(BUNDLE, o),
        lambda s, o: s.update_status(BUNDLE, o),
        lambda s, o: s.patch(BUNDLE, "a", {"spec": {"x": 1}}, "ws"),
        lambda s, o: s.patch(BUNDLE, "a", {"status": {"ignored": True}}, "ws"),
        lambda s, o: s.patch_status(BUNDLE, "a", {"status": {"ready": True}}, "ws"),
        lambda s, o: s.patch(BUNDLE, "a", {"metadata": {"labels": {"env": "prod"}}}, "ws"),
    ],
    ids=[
        "update",
        "update-status",
        "patch-spec",
        "patch-status-via-patch",
        "patch-status",
        "labels",
    ],
)
def test_no_op_writes_change_nothing(
    store: MemoryStore, write: Callable[[MemoryStore, Obj], Obj]
) -> None:
    store.create(
        BUNDLE,
        bundle(
            "a", spec={"x": 1}, metadata={"name": "a", "namespace": "ws", "labels": {"env": "prod"}}
        ),
    )
    current = store.patch_status(BUNDLE, "a", {"status": {"ready": True}}, "ws")
    recorder = Recorder()
    watch = store.watch(BUNDLE, recorder)
    result = write(store, current)
    watch.stop()
    assert result == current
    assert recorder.events == []
    assert store.list(BUNDLE).resource_version == current["metadata"]["resourceVersion"]


def test_type_changes_are_not_mistaken_for_no_ops(store: MemoryStore) -> None:
    store.create(BUNDLE, bundle("a", spec={"flag": 1}))
    assert store.patch(BUNDLE, "a", {"spec": {"flag": True}}, "ws")["spec"] == {"flag": True}
