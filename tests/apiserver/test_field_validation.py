"""`fieldValidation` over HTTP: unknown and duplicate fields of custom resources pass silently
(Ignore), as Warning headers (Warn, the default) or refuse the write (Strict) with the answers of
kube-apiserver's create, update and patch handlers; unknown fields are pruned either way."""

from __future__ import annotations

import json

import pytest
import requests

from bundler.store.protocol import Obj
from tests.support.apiserver.contract import MERGE, WIDGETS, Http, widget

STRICT_CREATE = (
    'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
    'unknown field "spec.foo"'
)


def warnings_of(response: requests.Response) -> list[str]:
    """The Warning headers of a response, one by one."""
    found: list[str] = response.raw.headers.getlist("Warning")
    return found


@pytest.mark.parametrize(
    ("query", "code", "warnings"),
    [
        ("", 201, ['299 - "unknown field \\"spec.foo\\""']),
        ("?fieldValidation=Warn", 201, ['299 - "unknown field \\"spec.foo\\""']),
        ("?fieldValidation=Ignore", 201, []),
    ],
    ids=["default-is-warn", "warn", "ignore"],
)
def test_unknown_fields_are_pruned_with_a_warning_unless_ignored(
    widgets: Http, query: str, code: int, warnings: list[str]
) -> None:
    response = widgets.send("POST", WIDGETS + query, widget(foo="bar"))
    assert response.status_code == code
    assert warnings_of(response) == warnings
    assert response.json()["spec"] == {"size": 1, "mode": "Slow"}
    assert widgets.call("GET", f"{WIDGETS}/w")[1]["spec"] == {"size": 1, "mode": "Slow"}


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "code", "message"),
    [
        ("POST", WIDGETS, widget("new", foo="bar"), {}, 400, STRICT_CREATE),
        ("PUT", f"{WIDGETS}/w", widget("w", foo="bar"), {}, 400, STRICT_CREATE),
    ],
    ids=["create", "update"],
)
def test_strict_refuses_unknown_fields_of_a_create_or_update_as_a_bad_request(
    widgets: Http,
    method: str,
    path: str,
    body: Obj,
    headers: dict[str, str],
    code: int,
    message: str,
) -> None:
    widgets.call("POST", WIDGETS, widget("w"))
    answer_code, status = widgets.call(method, f"{path}?fieldValidation=Strict", body)
    assert (answer_code, status["reason"], status["message"]) == (code, "BadRequest", message)


def test_strict_refuses_a_patch_that_adds_an_unknown_field_as_invalid(widgets: Http) -> None:
    created = widgets.call("POST", WIDGETS, widget("w"))[1]
    code, status = widgets.call(
        "PATCH", f"{WIDGETS}/w?fieldValidation=Strict", {"spec": {"foo": "bar"}}, headers=MERGE
    )
    patched = {**created, "spec": {**created["spec"], "foo": "bar"}}
    quoted = json.dumps(json.dumps(patched, sort_keys=True, separators=(",", ":")))
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == (
        f' "" is invalid: patch: Invalid value: {quoted}: strict decoding error: '
        'unknown field "spec.foo"'
    )
    assert status["details"] == {
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "field": "patch",
                "message": f"Invalid value: {quoted}: strict decoding error: "
                'unknown field "spec.foo"',
            }
        ]
    }


DUPLICATED = (
    '{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},'
    ' "spec": {"size": 1, "size": 2, "foo": 1, "labels": {"a": "x", "a": "y"}}}'
)


@pytest.mark.parametrize(
    ("query", "code", "expected"),
    [
        (
            "?fieldValidation=Strict",
            400,
            'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
            'duplicate field "spec.size", duplicate field "spec.labels.a", '
            'unknown field "spec.foo"',
        ),
        (
            "?fieldValidation=Warn",
            201,
            [
                '299 - "duplicate field \\"spec.size\\""',
                '299 - "duplicate field \\"spec.labels.a\\""',
                '299 - "unknown field \\"spec.foo\\""',
            ],
        ),
        ("?fieldValidation=Ignore", 201, []),
    ],
    ids=["strict", "warn", "ignore"],
)
def test_duplicate_fields_count_like_unknown_ones_and_the_last_value_wins(
    widgets: Http, query: str, code: int, expected: str | list[str]
) -> None:
    response = widgets.send("POST", WIDGETS + query, raw=DUPLICATED)
    assert response.status_code == code
    if code == 400:
        assert response.json()["message"] == expected
        return
    assert warnings_of(response) == expected
    assert response.json()["spec"] == {"size": 2, "labels": {"a": "y"}, "mode": "Slow"}


@pytest.mark.parametrize(
    ("path", "body", "warning", "part", "kept"),
    [
        (
            f"{WIDGETS}/w/status",
            {"status": {"phase": "Ready", "bogus": 1}},
            '299 - "unknown field \\"status.bogus\\""',
            "status",
            {"phase": "Ready"},
        ),
        (
            f"{WIDGETS}/w",
            {"metadata": {"labels": {"a": "b"}, "nickname": "x"}},
            '299 - "unknown field \\"metadata.nickname\\""',
            "metadata",
            {"labels": {"a": "b"}},
        ),
        (
            f"{WIDGETS}/w",
            {"spec": {"ports": [{"name": "http", "protocol": "TCP"}]}},
            '299 - "unknown field \\"spec.ports[0].protocol\\""',
            "spec",
            {"size": 1, "mode": "Slow", "ports": [{"name": "http", "port": 80}]},
        ),
    ],
    ids=["status-write", "metadata", "list-item"],
)
def test_patches_are_pruned_wherever_the_unknown_field_is(
    widgets: Http, path: str, body: Obj, warning: str, part: str, kept: Obj
) -> None:
    widgets.call("POST", WIDGETS, widget("w"))
    response = widgets.send("PATCH", path, body, headers=MERGE)
    assert response.status_code == 200
    assert warnings_of(response) == [warning]
    stored = widgets.call("GET", f"{WIDGETS}/w")[1][part]
    assert {k: v for k, v in stored.items() if k in (*kept, "nickname")} == kept


@pytest.mark.parametrize(
    ("method", "path", "headers", "options"),
    [
        ("POST", WIDGETS, {}, "CreateOptions"),
        ("PUT", f"{WIDGETS}/w", {}, "UpdateOptions"),
        ("PATCH", f"{WIDGETS}/w", MERGE, "PatchOptions"),
    ],
    ids=["create", "update", "patch"],
)
def test_an_unknown_directive_is_invalid_options(
    widgets: Http, method: str, path: str, headers: dict[str, str], options: str
) -> None:
    widgets.call("POST", WIDGETS, widget("w"))
    code, status = widgets.call(
        method, f"{path}?fieldValidation=Bogus", widget("w"), headers=headers
    )
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == (
        f'{options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
