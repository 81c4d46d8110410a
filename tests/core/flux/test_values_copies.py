"""bundler.core.flux.values_copies: remote mode's copies of valuesFrom objects."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bundler.core.flux.values_copies import (
    COPY_MAX_BYTES,
    CopyTooLargeError,
    copy_name,
    pointed_at_copies,
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


def test_every_entry_names_its_copy_and_keeps_the_rest() -> None:
    entries: list[dict[str, Any]] = [
        {"kind": "ConfigMap", "name": "settings", "valuesKey": "v.yaml"},
        {"kind": "Secret", "name": "absent", "optional": True},
    ]
    copies = {("ConfigMap", "settings"): "app-configmap-settings",
              ("Secret", "absent"): "app-secret-absent"}  # fmt: skip
    assert pointed_at_copies(entries, copies) == [
        {"kind": "Secret", "name": "app-configmap-settings", "valuesKey": "v.yaml"},
        {"kind": "Secret", "name": "app-secret-absent", "optional": True},
    ]
