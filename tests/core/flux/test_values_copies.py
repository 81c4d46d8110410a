"""bundler.core.flux.values_copies: the copies of valuesFrom objects (remote mode's of downstream
objects, the manager's of management objects), their names, and the HelmRelease's entries."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bundler.core.flux.values_copies import (
    COPY_MAX_BYTES,
    CopyTooLargeError,
    copy_data,
    copy_name,
    data_digest,
    delivered_values,
    management_copy_name,
    release_values_from,
    values_copy,
)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("kind", "source", "data"),
    [
        ("Secret", {"data": {"password": _b64("s3cret")}}, {"password": _b64("s3cret")}),
        ("ConfigMap", {"data": {"values.yaml": "a: 1\n"}}, {"values.yaml": _b64("a: 1\n")}),
        (
            "ConfigMap",
            {"data": {"a": "x"}, "binaryData": {"b": _b64("\x00")}},
            {"a": _b64("x"), "b": _b64("\x00")},
        ),
        ("Secret", {"data": {"ok": _b64("1"), "odd": 7}}, {"ok": _b64("1")}),
        ("ConfigMap", {}, {}),
    ],
    ids=["secret-as-is", "configmap-encoded", "configmap-binary", "non-text-dropped", "empty"],
)
def test_a_copy_is_a_secret_of_the_data(
    kind: str, source: dict[str, Any], data: dict[str, str]
) -> None:
    copy = values_copy(
        source, kind, name="app-x", namespace="ns", labels={"l": "v"}, annotations={"a": "b"}
    )
    assert (copy["kind"], copy["type"], copy["data"]) == ("Secret", "Opaque", data)
    assert copy["metadata"] == {
        "name": "app-x",
        "namespace": "ns",
        "labels": {"l": "v"},
        "annotations": {"a": "b"},
    }


def test_a_copy_larger_than_the_cap_is_refused() -> None:
    huge = {"data": {"values.yaml": "x" * COPY_MAX_BYTES}}
    with pytest.raises(CopyTooLargeError, match="more than"):
        values_copy(huge, "ConfigMap", name="n", namespace="ns", labels={}, annotations={})


@pytest.mark.parametrize(
    ("release", "kind", "name", "expected"),
    [
        ("app", "ConfigMap", "settings", "app-configmap-settings"),
        ("app", "Secret", "db", "app-secret-db"),
        ("a" * 63, "Secret", "b" * 200, None),
    ],
    ids=["configmap", "secret", "shortened"],
)
def test_copy_names(release: str, kind: str, name: str, expected: str | None) -> None:
    found = copy_name(release, kind, name)
    assert len(found) <= 253
    assert found == expected if expected is not None else found != copy_name(release, kind, "c")


DIGEST = "sha256:" + "ab" * 32
OTHER = "sha256:" + "cd" * 32
SETTINGS = {"kind": "ConfigMap", "name": "settings", "valuesKey": "v.yaml"}
ABSENT = {"kind": "Secret", "name": "absent", "optional": True}
MGMT_DB = {"kind": "Secret", "name": "db", "source": "Management", "targetPath": "db"}
MGMT_OPTIONAL = {"kind": "ConfigMap", "name": "maybe", "source": "Management", "optional": True}
DOWNSTREAM_EXPLICIT = {"kind": "Secret", "name": "local", "source": "Downstream"}
DELIVERED_DB = {
    "kind": "Secret",
    "name": "db",
    "digest": DIGEST,
    "secretName": "app-mgmt-secret-db-abababab",
}


@pytest.mark.parametrize(
    ("entries", "delivered", "remote", "expected"),
    [
        ([SETTINGS, ABSENT], [], False, [SETTINGS, ABSENT]),
        (
            [SETTINGS, ABSENT],
            [],
            True,
            [
                {"kind": "Secret", "name": "app-configmap-settings", "valuesKey": "v.yaml"},
                {"kind": "Secret", "name": "app-secret-absent", "optional": True},
            ],
        ),
        (
            [SETTINGS, MGMT_DB],
            [DELIVERED_DB],
            False,
            [
                SETTINGS,
                {"kind": "Secret", "name": "app-mgmt-secret-db-abababab", "targetPath": "db"},
            ],
        ),
        (
            [MGMT_DB, SETTINGS],
            [DELIVERED_DB],
            True,
            [
                {"kind": "Secret", "name": "app-mgmt-secret-db-abababab", "targetPath": "db"},
                {"kind": "Secret", "name": "app-configmap-settings", "valuesKey": "v.yaml"},
            ],
        ),
        ([MGMT_OPTIONAL, SETTINGS], [], False, [SETTINGS]),
        ([DOWNSTREAM_EXPLICIT], [], False, [{"kind": "Secret", "name": "local"}]),
    ],
    ids=[
        "pull-downstream-as-written",
        "remote-downstream-copies",
        "pull-management-copy",
        "remote-management-copy-in-order",
        "optional-not-delivered-left-out",
        "source-field-never-reaches-flux",
    ],
)
def test_the_entries_the_helm_release_gets(
    entries: list[dict[str, Any]],
    delivered: list[dict[str, Any]],
    remote: bool,
    expected: list[dict[str, Any]],
) -> None:
    assert release_values_from(entries, delivered, "app", remote=remote) == expected


@pytest.mark.parametrize(
    ("entries", "digests", "expected"),
    [
        ([SETTINGS], {("ConfigMap", "settings"): DIGEST}, None),
        ([MGMT_DB], {}, None),
        (
            [MGMT_DB, {**MGMT_DB, "valuesKey": "other"}],
            {("Secret", "db"): DIGEST},
            [{**DELIVERED_DB, "secretName": management_copy_name("app", "Secret", "db", DIGEST)}],
        ),
        (
            [MGMT_OPTIONAL, MGMT_DB],
            {("Secret", "db"): DIGEST, ("ConfigMap", "maybe"): OTHER},
            [
                {
                    "kind": "ConfigMap",
                    "name": "maybe",
                    "digest": OTHER,
                    "secretName": "app-mgmt-configmap-maybe-cdcdcdcdcd",
                },
                {**DELIVERED_DB, "secretName": "app-mgmt-secret-db-ababababab"},
            ],
        ),
    ],
    ids=["downstream-only", "not-delivered", "one-per-object", "in-order-named"],
)
def test_what_the_options_record_of_delivered_objects(
    entries: list[dict[str, Any]],
    digests: dict[tuple[str, str], str],
    expected: list[dict[str, Any]] | None,
) -> None:
    assert delivered_values(entries, digests, "app") == expected


def test_a_digest_follows_the_data_only() -> None:
    one = copy_data({"data": {"values.yaml": "a: 1\n"}}, "ConfigMap")
    same = copy_data({"data": {"values.yaml": "a: 1\n"}, "metadata": {"name": "x"}}, "ConfigMap")
    other = copy_data({"data": {"values.yaml": "a: 2\n"}}, "ConfigMap")
    assert data_digest(one) == data_digest(same) != data_digest(other)
    assert data_digest(one).startswith("sha256:") and len(data_digest(one)) == 7 + 64


@pytest.mark.parametrize(
    ("release", "name"),
    [("app", "db"), ("a" * 63, "b" * 253)],
    ids=["readable", "shortened"],
)
def test_management_copies_never_share_a_name(release: str, name: str) -> None:
    names = {
        management_copy_name(release, kind, name, digest)
        for kind in ("Secret", "ConfigMap")
        for digest in (DIGEST, OTHER)
    }
    names |= {copy_name(release, kind, name) for kind in ("Secret", "ConfigMap")}
    assert len(names) == 6
    assert all(len(n) <= 253 for n in names)
