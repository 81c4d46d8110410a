from __future__ import annotations

from typing import Any

import pytest

from bundler.core.diff.manifests import ObjectKey, diff_manifests, redact_secrets
from bundler.core.diff.values import ChangeKind


def configmap(name: str, data: dict[str, str], namespace: str = "apps") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def deployment(name: str, group: str = "apps") -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Deployment", "metadata": {"name": name}}


def test_objects_are_added_removed_or_changed_by_kind_namespace_and_name() -> None:
    old = [configmap("kept", {"a": "1"}), configmap("gone", {}), configmap("same", {"x": "y"})]
    new = [configmap("kept", {"a": "2"}), configmap("made", {}), configmap("same", {"x": "y"})]
    changes = diff_manifests(old, new)
    assert [(str(c.key), c.kind) for c in changes] == [
        ("ConfigMap apps/gone", ChangeKind.REMOVED),
        ("ConfigMap apps/kept", ChangeKind.CHANGED),
        ("ConfigMap apps/made", ChangeKind.ADDED),
    ]
    changed = changes[1]
    assert [f.describe() for f in changed.fields] == ['data.a: "1" -> "2"']
    assert "-  a: '1'\n+  a: '2'\n" in changed.diff
    assert changed.diff.startswith("--- a/ConfigMap apps/kept\n+++ b/ConfigMap apps/kept\n")


def test_the_same_name_in_another_namespace_or_group_is_another_object() -> None:
    changes = diff_manifests(
        [configmap("c", {}, "one"), deployment("d", "apps")],
        [configmap("c", {}, "two"), deployment("d", "example.com")],
    )
    assert sorted(str(c.key) for c in changes) == [
        "ConfigMap one/c",
        "ConfigMap two/c",
        "Deployment.apps d",
        "Deployment.example.com d",
    ]


def test_an_object_without_metadata_still_has_a_key() -> None:
    assert ObjectKey.of({"kind": "List"}) == ObjectKey("", "List", "", "")


def test_identical_releases_have_no_change() -> None:
    objects = [configmap("a", {"k": "v"}), deployment("d")]
    assert diff_manifests(objects, list(reversed(objects))) == []


def secret(data: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}}
    if data is not None:
        body["data"] = data
    return {**body, **fields}


def tag(value: str) -> str:
    return f"h({len(value)})"


REDACT_CASES = [
    ("data", secret({"password": "c2VjcmV0"}), secret({"password": "(redacted h(8))"})),
    (
        "string-data",
        secret(stringData={"token": "abc"}),
        secret(stringData={"token": "(redacted h(3))"}),
    ),
    ("no-data", secret(), secret()),
    (
        "not-a-secret",
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}},
    ),
    (
        "another-groups-secret",
        {"apiVersion": "example.com/v1", "kind": "Secret", "data": {"a": "b"}},
        {"apiVersion": "example.com/v1", "kind": "Secret", "data": {"a": "b"}},
    ),
]


@pytest.mark.parametrize(
    ("obj", "expected"), [c[1:] for c in REDACT_CASES], ids=[c[0] for c in REDACT_CASES]
)
def test_secret_values_are_replaced_by_a_fingerprint(
    obj: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert redact_secrets([obj], tag) == [expected]


def test_a_changed_secret_value_shows_as_changed_without_its_value() -> None:
    old = redact_secrets([secret({"password": "b2xk", "user": "YQ=="})], lambda v: v[::-1])
    new = redact_secrets([secret({"password": "bmV3", "user": "YQ=="})], lambda v: v[::-1])
    (change,) = diff_manifests(old, new)
    assert [f.path for f in change.fields] == [("data", "password")]
    assert "b2xk" not in change.diff and "bmV3" not in change.diff
