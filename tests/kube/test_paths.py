"""REST paths built from Resources."""

from __future__ import annotations

import pytest

from bundler.api.resources import BUNDLE, NAMESPACE, SECRET, Resource
from bundler.kube.paths import collection_path, label_selector, object_path
from bundler.store.errors import Invalid

NO_STATUS = Resource("example.com", "v1", "Thing", "things")


@pytest.mark.parametrize(
    ("res", "namespace", "expected"),
    [
        (SECRET, "ns", "/api/v1/namespaces/ns/secrets"),
        (SECRET, None, "/api/v1/secrets"),
        (BUNDLE, "ws", "/apis/bundler.dev/v1alpha1/namespaces/ws/bundles"),
        (BUNDLE, None, "/apis/bundler.dev/v1alpha1/bundles"),
        (NAMESPACE, "ignored", "/api/v1/namespaces"),
    ],
    ids=["core", "core-all-namespaces", "group", "group-all-namespaces", "cluster-scoped"],
)
def test_collection_path(res: Resource, namespace: str | None, expected: str) -> None:
    assert collection_path(res, namespace) == expected


@pytest.mark.parametrize(
    ("res", "name", "namespace", "status", "expected"),
    [
        (BUNDLE, "b", "ws", False, "/apis/bundler.dev/v1alpha1/namespaces/ws/bundles/b"),
        (BUNDLE, "b", "ws", True, "/apis/bundler.dev/v1alpha1/namespaces/ws/bundles/b/status"),
        (NO_STATUS, "t", "ws", True, "/apis/example.com/v1/namespaces/ws/things/t"),
        (NAMESPACE, "ns", None, False, "/api/v1/namespaces/ns"),
        (SECRET, "a/b", "ns", False, "/api/v1/namespaces/ns/secrets/a%2Fb"),
    ],
    ids=["object", "status", "no-status-subresource", "cluster-scoped", "name-is-quoted"],
)
def test_object_path(
    res: Resource, name: str, namespace: str | None, status: bool, expected: str
) -> None:
    assert object_path(res, name, namespace, status=status) == expected


def test_object_path_needs_namespace_for_namespaced_kind() -> None:
    with pytest.raises(Invalid, match="namespace is required"):
        object_path(SECRET, "s", None)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [(None, None), ({}, None), ({"b": "2", "a": "1"}, "a=1,b=2")],
    ids=["none", "empty", "sorted-pairs"],
)
def test_label_selector(labels: dict[str, str] | None, expected: str | None) -> None:
    assert label_selector(labels) == expected
