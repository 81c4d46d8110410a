"""KubeStore's reads and writes over real HTTP against the test API server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bundler.api.resources import BUNDLE, HELM_RELEASE, NAMESPACE, SECRET, Resource
from bundler.apiserver import ApiServer, Verb
from bundler.kube.store import KubeStore
from bundler.store.errors import (
    AlreadyExists,
    Conflict,
    Forbidden,
    Invalid,
    KindNotServed,
    NotFound,
)
from bundler.store.protocol import Store
from tests.support.kube.store_client import FAST, bundle


def test_crud_roundtrip(store: KubeStore) -> None:
    created = store.create(BUNDLE, bundle("a"))
    assert created["metadata"]["generation"] == 1
    assert store.get(BUNDLE, "a", "ws") == created
    created["spec"]["helm"]["chart"] = "nginx"
    updated = store.update(BUNDLE, created)
    assert updated["spec"]["helm"]["chart"] == "nginx"
    assert updated["metadata"]["generation"] == 2
    store.delete(BUNDLE, "a", "ws")
    with pytest.raises(NotFound, match="ws/a"):
        store.get(BUNDLE, "a", "ws")


def test_cluster_scoped_and_core_kinds(store: KubeStore) -> None:
    store.create(NAMESPACE, {"metadata": {"name": "fresh"}})
    store.create(SECRET, {"metadata": {"name": "s", "namespace": "fresh"}, "data": {"k": "dg=="}})
    assert store.get(SECRET, "s", "fresh")["data"] == {"k": "dg=="}
    assert "fresh" in [n["metadata"]["name"] for n in store.list(NAMESPACE).items]
    store.delete(SECRET, "s", "fresh")
    with pytest.raises(NotFound):
        store.get(SECRET, "s", "fresh")


def test_status_subresource(store: KubeStore) -> None:
    store.create(BUNDLE, bundle("a"))
    patched = store.patch_status(BUNDLE, "a", {"status": {"resolvedVersion": "1.0.0"}}, "ws")
    assert patched["status"] == {"resolvedVersion": "1.0.0"}
    patched["status"] = {"resolvedVersion": "2.0.0"}
    patched["spec"] = {"helm": {"chart": "ignored"}}
    updated = store.update_status(BUNDLE, patched)
    assert updated["status"] == {"resolvedVersion": "2.0.0"}
    assert updated["spec"] == {"helm": {"chart": "podinfo"}}
    assert updated["metadata"]["generation"] == 1


def test_update_ignores_status(store: KubeStore) -> None:
    created = store.create(BUNDLE, bundle("a"))
    created["status"] = {"resolvedVersion": "9.9.9"}
    assert "status" not in store.update(BUNDLE, created)


def test_merge_patch(store: KubeStore) -> None:
    store.create(BUNDLE, bundle("a", env="prod", tier="gold"))
    patched = store.patch(
        BUNDLE, "a", {"metadata": {"labels": {"tier": None}}, "spec": {"paused": True}}, "ws"
    )
    assert patched["metadata"]["labels"] == {"env": "prod"}
    assert patched["spec"] == {"helm": {"chart": "podinfo"}, "paused": True}


def test_conflict_on_stale_resource_version_is_not_retried(
    server: ApiServer, store: KubeStore
) -> None:
    stale = store.create(BUNDLE, bundle("a"))
    store.patch(BUNDLE, "a", {"spec": {"paused": True}}, "ws")
    server.reset_counts()
    with pytest.raises(Conflict, match="ws/a"):
        store.update(BUNDLE, stale)
    assert server.request_counts()[Verb.UPDATE] == 1


def test_create_twice_is_already_exists(store: KubeStore) -> None:
    store.create(BUNDLE, bundle("a"))
    with pytest.raises(AlreadyExists, match="ws/a"):
        store.create(BUNDLE, bundle("a"))


@pytest.mark.parametrize(
    "operation",
    [
        lambda s: s.get(BUNDLE, "missing", "ws"),
        lambda s: s.patch(BUNDLE, "missing", {"spec": {}}, "ws"),
        lambda s: s.delete(BUNDLE, "missing", "ws"),
        lambda s: s.create(BUNDLE, bundle("a", namespace="no-such-namespace")),
    ],
    ids=["get", "patch", "delete", "create-in-missing-namespace"],
)
def test_not_found(store: KubeStore, operation: Callable[[KubeStore], object]) -> None:
    with pytest.raises(NotFound):
        operation(store)


def test_invalid_object(store: KubeStore) -> None:
    with pytest.raises(Invalid):
        store.create(BUNDLE, {**bundle("a"), "kind": "Cluster"})


def test_namespace_required_for_namespaced_kind(store: KubeStore) -> None:
    with pytest.raises(Invalid, match="namespace"):
        store.create(BUNDLE, {"metadata": {"name": "a"}})


def test_list_by_namespace_and_labels(store: KubeStore) -> None:
    store.create(BUNDLE, bundle("a", env="prod", region="eu"))
    store.create(BUNDLE, bundle("b", env="prod", region="us"))
    store.create(BUNDLE, bundle("c", namespace="other", env="prod", region="eu"))

    def names(namespace: str | None, **labels: str) -> list[str]:
        listed = store.list(BUNDLE, namespace, labels or None)
        assert all(o["kind"] == "Bundle" for o in listed.items)
        return sorted(o["metadata"]["name"] for o in listed.items)

    assert names("ws") == ["a", "b"]
    assert names(None) == ["a", "b", "c"]
    assert names(None, env="prod", region="eu") == ["a", "c"]
    assert names("ws", region="eu") == ["a"]
    assert names("ws", env="dev") == []


def test_list_resource_version_is_current(store: KubeStore) -> None:
    created = store.create(BUNDLE, bundle("a"))
    assert store.list(BUNDLE, "ws").resource_version == created["metadata"]["resourceVersion"]


def test_kind_not_served(server: ApiServer, store: KubeStore) -> None:
    server.remove_resource(HELM_RELEASE)
    release = {"metadata": {"name": "r", "namespace": "ws"}, "spec": {}}
    for operation in (
        lambda: store.get(HELM_RELEASE, "r", "ws"),
        lambda: store.list(HELM_RELEASE, "ws"),
        lambda: store.create(HELM_RELEASE, release),
    ):
        with pytest.raises(KindNotServed, match="helmreleases"):
            operation()
    assert not store.served(HELM_RELEASE)
    assert store.served(BUNDLE)
    assert store.served(NAMESPACE)


def test_served_group_without_the_plural(server: ApiServer, store: KubeStore) -> None:
    server.remove_resource(HELM_RELEASE)
    other_in_group = Resource(HELM_RELEASE.group, HELM_RELEASE.version, "Other", "others")
    server.add_resource(other_in_group)
    assert not store.served(HELM_RELEASE)
    assert store.served(other_in_group)


@pytest.mark.parametrize(
    ("token", "error"),
    [("right", None), ("wrong", Forbidden), ("", Forbidden)],
    ids=["right-token", "wrong-token", "no-token"],
)
def test_bearer_token(tmp_path: Path, token: str, error: type[Exception] | None) -> None:
    with ApiServer(token="right") as server:
        path = server.kubeconfig(tmp_path / "kubeconfig", token=token)
        with KubeStore.from_kubeconfig(path, options=FAST) as store:
            if error is None:
                assert store.list(NAMESPACE).items == []
            else:
                with pytest.raises(error):
                    store.list(NAMESPACE)


def test_kube_store_is_a_store(store: KubeStore) -> None:
    as_store: Store = store  # mypy checks the structural match with the protocol
    assert as_store is store


def test_store_from_kubeconfig_text(server: ApiServer, tmp_path: Path) -> None:
    text = server.kubeconfig(tmp_path / "kubeconfig").read_bytes()
    with KubeStore.from_kubeconfig_text(text, options=FAST, source="ws/c-kubeconfig") as store:
        assert {"ws", "other"} <= {n["metadata"]["name"] for n in store.list(NAMESPACE).items}
