"""Custom resources are validated against their CRD's schema over HTTP, with kube-apiserver's
422 Invalid: its field paths, cause reasons and messages, on create, update, patch and status
writes, ratcheting what an update leaves as it was."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.apiserver import ApiServer
from bundler.store.protocol import Obj
from tests.support.apiserver.contract import (
    BUNDLES,
    MERGE,
    WIDGET,
    WIDGETS,
    Http,
    bundle_body,
    widget,
)

Cause = tuple[str, str, str]


def causes(status: Obj) -> list[Cause]:
    return [(c.get("field", ""), c["reason"], c["message"]) for c in status["details"]["causes"]]


def type_error(field: str, found: str, expected: str) -> Cause:
    detail = f'{field} in body must be of type {expected}: "{found}"'
    return (field, "FieldValueTypeInvalid", f'Invalid value: "{found}": {detail}')


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"size": "big"}, [type_error("spec.size", "string", "integer")]),
        (
            {"mode": "Bogus"},
            [
                (
                    "spec.mode",
                    "FieldValueNotSupported",
                    'Unsupported value: "Bogus": supported values: "Fast", "Slow"',
                )
            ],
        ),
        (
            {"name": "ab"},
            [
                (
                    "spec.name",
                    "FieldValueInvalid",
                    'Invalid value: "ab": spec.name in body should be at least 3 chars long',
                )
            ],
        ),
        (
            {"name": "abcdefghi"},
            [("spec.name", "FieldValueTooLong", "Too long: may not be more than 8 bytes")],
        ),
        (
            {"name": "ABC"},
            [
                (
                    "spec.name",
                    "FieldValueInvalid",
                    "Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'",
                )
            ],
        ),
        (
            {"size": 0},
            [
                (
                    "spec.size",
                    "FieldValueInvalid",
                    "Invalid value: 0: spec.size in body should be greater than or equal to 1",
                )
            ],
        ),
        (
            {"size": 11},
            [
                (
                    "spec.size",
                    "FieldValueInvalid",
                    "Invalid value: 11: spec.size in body should be less than or equal to 10",
                )
            ],
        ),
        (
            {"ratio": 1.0},
            [
                (
                    "spec.ratio",
                    "FieldValueInvalid",
                    "Invalid value: 1: spec.ratio in body should be less than 1",
                )
            ],
        ),
        (
            {"size": 1.5},
            [
                type_error("spec.size", "number", "integer"),
                (
                    "<nil>",
                    "FieldValueInvalid",
                    'Invalid value: "": Checked value must be of type integer (default format) '
                    "in spec.size",
                ),
            ],
        ),
        (
            {"tags": []},
            [
                (
                    "spec.tags",
                    "FieldValueInvalid",
                    "Invalid value: 0: spec.tags in body should have at least 1 items",
                )
            ],
        ),
        (
            {"tags": ["a", "b", "c"]},
            [("spec.tags", "FieldValueTooMany", "Too many: 3: must have at most 2 items")],
        ),
        ({"tags": [None]}, [type_error("spec.tags[0]", "null", "string")]),
        (
            {"since": "yesterday"},
            [
                (
                    "spec.since",
                    "FieldValueTypeInvalid",
                    'Invalid value: "yesterday": spec.since in body must be of type date-time: '
                    '"yesterday"',
                )
            ],
        ),
        (
            {"host": "Web_1"},
            [
                (
                    "spec.host",
                    "FieldValueTypeInvalid",
                    'Invalid value: "Web_1": spec.host in body must be of type k8s-short-name: '
                    '"Web_1"',
                )
            ],
        ),
        ({"replicas": True}, [type_error("spec.replicas", "boolean", "integer,string")]),
        ({"labels": {"team": 7}}, [type_error("spec.labels.team", "integer", "string")]),
        (
            {"ports": [{"port": 8080}]},
            [("spec.ports[0].name", "FieldValueRequired", "Required value")],
        ),
        ({"size": None}, [("spec.size", "FieldValueRequired", "Required value")]),
    ],
    ids=[
        "type",
        "enum",
        "min-length",
        "max-length",
        "pattern",
        "minimum",
        "maximum",
        "exclusive-maximum",
        "integer-not-whole",
        "min-items",
        "max-items",
        "null-list-item",
        "format-date-time",
        "format-k8s-short-name",
        "int-or-string",
        "additional-properties",
        "required-in-list-item",
        "null-dropped-then-required",
    ],
)
def test_create_is_refused_as_kube_apiserver_refuses_it(
    widgets: Http, spec: Obj, expected: list[Cause]
) -> None:
    code, status = widgets.call("POST", WIDGETS, widget(**spec))
    assert (code, status["reason"]) == (422, "Invalid")
    assert causes(status) == expected
    assert widgets.call("GET", f"{WIDGETS}/w")[0] == 404


@pytest.mark.parametrize(
    ("spec", "stored"),
    [
        ({"replicas": "50%"}, {"replicas": "50%"}),
        ({"replicas": 3}, {"replicas": 3}),
        ({"note": None}, {"note": None}),
        ({"name": None}, {}),
        ({"extra": {"any": {"deep": [1, "x"]}}}, {"extra": {"any": {"deep": [1, "x"]}}}),
        ({"size": 2.0}, {"size": 2.0}),
        (
            {"since": "2026-01-02T03:04:05Z", "host": "web-1"},
            {"since": "2026-01-02T03:04:05Z", "host": "web-1"},
        ),
    ],
    ids=[
        "int-or-string-string",
        "int-or-string-integer",
        "nullable-null-kept",
        "non-nullable-null-dropped",
        "preserve-unknown-fields",
        "whole-number-is-an-integer",
        "formats",
    ],
)
def test_valid_widgets_are_stored(widgets: Http, spec: Obj, stored: Obj) -> None:
    code, created = widgets.call("POST", WIDGETS, widget(**spec))
    assert code == 201, created
    assert created["spec"] == {"size": 1, "mode": "Slow", **stored}


def test_the_message_lists_every_error_once_with_the_kind_and_group(widgets: Http) -> None:
    _, status = widgets.call("POST", WIDGETS, widget("bad", size="big", mode="Bogus"))
    errors = [
        'spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"',
        'spec.mode: Unsupported value: "Bogus": supported values: "Fast", "Slow"',
    ]
    # kube-apiserver visits an object's properties in Go's map order, which varies from one
    # request to the next: the errors of sibling fields come in either order (the stand-in's
    # is the schema's), the causes in the message's.
    assert status["message"] in {
        f'Widget.example.com "bad" is invalid: [{", ".join(order)}]'
        for order in (errors, errors[::-1])
    }
    listed = [f"{c['field']}: {c['message']}" for c in status["details"]["causes"]]
    assert status["message"].endswith(f"[{', '.join(listed)}]")
    assert status["details"] == {
        "name": "bad",
        "group": "example.com",
        "kind": "Widget",
        "causes": status["details"]["causes"],
    }


def test_metadata_and_schema_errors_come_in_one_answer(widgets: Http) -> None:
    code, status = widgets.call("POST", WIDGETS, widget("Bad", size="big"))
    assert code == 422
    assert [field for field, _, _ in causes(status)] == ["metadata.name", "spec.size"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {**bundle_body("b"), "spec": {"helm": {}, "targetMode": "Bogus"}},
            'Bundle.bundler.dev "b" is invalid: spec.targetMode: Unsupported value: "Bogus": '
            'supported values: "FirstMatch", "AllMatches"',
        ),
        (
            {**bundle_body("b"), "spec": {"helm": {}, "rolloutStrategy": {"partitions": [{}]}}},
            'Bundle.bundler.dev "b" is invalid: spec.rolloutStrategy.partitions[0].name: '
            "Required value",
        ),
        (
            {**bundle_body("b"), "spec": {"helm": {"maxHistory": -1}}},
            'Bundle.bundler.dev "b" is invalid: spec.helm.maxHistory: Invalid value: -1: '
            "spec.helm.maxHistory in body should be greater than or equal to 0",
        ),
    ],
    ids=["enum", "required", "minimum"],
)
def test_bundler_kinds_are_validated_against_bundlers_crds(
    api: Http, body: Obj, expected: str
) -> None:
    code, status = api.call("POST", BUNDLES, body)
    assert (code, status["message"]) == (422, expected)


def test_a_cluster_needs_no_spec(api: Http) -> None:
    clusters = "/apis/bundler.dev/v1alpha1/namespaces/{ns}/clusters"
    edge = {"apiVersion": "bundler.dev/v1alpha1", "kind": "Cluster", "metadata": {"name": "edge"}}
    assert api.call("POST", clusters, edge)[0] == 201


@pytest.mark.parametrize(
    ("method", "path", "body", "headers"),
    [
        ("PUT", f"{WIDGETS}/w", {**widget(), "spec": {"size": 99}}, {}),
        ("PATCH", f"{WIDGETS}/w", {"spec": {"size": None}}, MERGE),
        ("PATCH", f"{WIDGETS}/w", {"spec": {"tags": ["a", "b", "c"]}}, MERGE),
    ],
    ids=["update", "patch-removing-a-required-field", "patch-result"],
)
def test_updates_and_patches_validate_what_they_would_store(
    widgets: Http, method: str, path: str, body: Obj, headers: dict[str, str]
) -> None:
    created = widgets.call("POST", WIDGETS, widget())[1]
    if method == "PUT":
        body["metadata"] = created["metadata"]
    code, status = widgets.call(method, path, body, headers=headers)
    assert (code, status["reason"]) == (422, "Invalid")
    stored = widgets.call("GET", f"{WIDGETS}/w")[1]
    assert stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (
            {"phase": "Bogus"},
            [
                (
                    "status.phase",
                    "FieldValueNotSupported",
                    'Unsupported value: "Bogus": supported values: "Ready", "Failed"',
                )
            ],
        ),
        # The real server's message names the path below status.
        (
            {"count": "many"},
            [
                (
                    "status.count",
                    "FieldValueTypeInvalid",
                    'Invalid value: "string": count in body must be of type integer: "string"',
                )
            ],
        ),
    ],
    ids=["enum", "type"],
)
def test_status_writes_validate_the_status(
    widgets: Http, status: Obj, expected: list[Cause]
) -> None:
    widgets.call("POST", WIDGETS, widget())
    code, answer = widgets.call("PATCH", f"{WIDGETS}/w/status", {"status": status}, headers=MERGE)
    assert (code, causes(answer)) == (422, expected)


@pytest.mark.stand_in_only("stores an invalid object directly")
def test_a_status_write_validates_the_status_alone(server: ApiServer, widgets: Http) -> None:
    server.store.create(
        WIDGET, {"metadata": {"name": "w", "namespace": widgets.namespace}, "spec": {}}
    )
    status = {"status": {"phase": "Ready"}}
    code, written = widgets.call("PATCH", f"{WIDGETS}/w/status", status, headers=MERGE)
    assert (code, written["status"]) == (200, {"phase": "Ready"})


@pytest.mark.parametrize(
    ("patch", "code"),
    [
        ({"spec": {"mode": "Fast"}}, 200),
        ({"metadata": {"labels": {"team": "a"}}}, 200),
        ({"spec": {"tags": ["a", "b", "c", "d"]}}, 422),
        ({"spec": {"size": "bigger"}}, 422),
    ],
    ids=[
        "other-field-changed",
        "metadata-changed",
        "invalid-field-changed",
        "invalid-field-changed-to-another-invalid-value",
    ],
)
@pytest.mark.stand_in_only("stores an object made invalid by a schema change directly")
def test_updates_ratchet_what_they_leave_unchanged(
    server: ApiServer, widgets: Http, patch: Obj, code: int
) -> None:
    # Stored before the schema tightened: invalid today, as written then.
    invalid: dict[str, Any] = {"size": "big", "tags": ["a", "b", "c"]}
    meta = {"name": "w", "namespace": widgets.namespace}
    server.store.create(WIDGET, {"metadata": meta, "spec": invalid})
    assert widgets.call("PATCH", f"{WIDGETS}/w", patch, headers=MERGE)[0] == code
