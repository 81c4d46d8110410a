"""The limits of a real cluster with default settings, with its answers: kube-apiserver's 3 MiB
request body limit (413), etcd's 1.5 MiB request limit (500, etcd's message passed through), and
apimachinery's rules and messages for names, labels and annotations (422 Invalid)."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.apiserver.limits import ETCD_MAX_REQUEST_BYTES, MAX_REQUEST_BODY_BYTES
from bundler.store.protocol import Obj
from tests.support.apiserver.contract import BUNDLES, MERGE, ROLES, Http

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value', "
    " or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
ETCD_TOO_LARGE = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "etcdserver: request is too large",
    "code": 500,
}


def bundle(name: str = "app", labels: dict[str, str] | None = None, **meta: Any) -> Obj:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "labels": labels or {}, **meta},
        "spec": {"helm": {"chart": "podinfo"}},
    }


def padded(size: int) -> Obj:
    """A Bundle whose JSON is about `size` bytes."""
    return {**bundle(), "spec": {"helm": {"chart": "podinfo", "values": {"pad": "x" * size}}}}


@pytest.mark.parametrize(
    ("size", "expected"),
    [(ETCD_MAX_REQUEST_BYTES - 1024, 201), (ETCD_MAX_REQUEST_BYTES + 1024, 500)],
    ids=["just-under-etcd-limit", "just-over-etcd-limit"],
)
def test_objects_over_etcds_limit_are_refused_with_etcds_error(
    api: Http, size: int, expected: int
) -> None:
    code, answer = api.call("POST", BUNDLES, padded(size))
    assert code == expected
    if expected == 500:
        assert answer == ETCD_TOO_LARGE
        assert api.call("GET", f"{BUNDLES}/app")[0] == 404


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("PUT", f"{BUNDLES}/app", {}),
        ("PATCH", f"{BUNDLES}/app", MERGE),
        ("PATCH", f"{BUNDLES}/app/status", MERGE),
    ],
    ids=["update", "patch", "status-patch"],
)
def test_every_write_that_would_grow_an_object_past_etcds_limit_is_refused(
    api: Http, method: str, path: str, headers: dict[str, str]
) -> None:
    created = api.call("POST", BUNDLES, bundle())[1]
    big = "x" * (ETCD_MAX_REQUEST_BYTES + 1)
    bodies = {
        "update": {**created, "spec": {"helm": {"chart": big}}},
        "patch": {"spec": {"helm": {"chart": big}}},
        "status-patch": {"status": {"resolvedVersion": big}},
    }
    kind = "status-patch" if path.endswith("/status") else "update" if method == "PUT" else "patch"
    assert api.call(method, path, bodies[kind], headers=headers) == (500, ETCD_TOO_LARGE)
    assert (
        api.call("GET", f"{BUNDLES}/app")[1]["metadata"]["resourceVersion"]
        == (created["metadata"]["resourceVersion"])
    )


def test_request_bodies_over_three_mebibytes_are_refused(api: Http) -> None:
    code, answer = api.call("POST", BUNDLES, padded(MAX_REQUEST_BODY_BYTES))
    assert (code, answer["reason"], answer["message"]) == (
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    )


INVALID: list[tuple[str, str, Obj, str, list[str]]] = [
    (
        "uppercase-name",
        BUNDLES,
        bundle("App"),
        'Bundle.bundler.dev "App" is invalid: metadata.name: Invalid value: "App": ' + SUBDOMAIN,
        ["metadata.name"],
    ),
    (
        "name-too-long",
        BUNDLES,
        bundle("a" * 254),
        f'Bundle.bundler.dev "{"a" * 254}" is invalid: metadata.name: Invalid value: '
        f'"{"a" * 254}": must be no more than 253 characters',
        ["metadata.name"],
    ),
    (
        "namespace-name-is-a-label",
        "/api/v1/namespaces",
        {"metadata": {"name": "a_b"}},
        'Namespace "a_b" is invalid: metadata.name: Invalid value: "a_b": ' + DNS_LABEL,
        ["metadata.name"],
    ),
    (
        "namespace-name-without-dots",
        "/api/v1/namespaces",
        {"metadata": {"name": "a.b"}},
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
        ["metadata.name"],
    ),
    (
        "rbac-name-is-a-path-segment",
        ROLES,
        {"metadata": {"name": "a%b"}, "rules": []},
        'Role.rbac.authorization.k8s.io "a%b" is invalid: metadata.name: Invalid value: "a%b": '
        "may not contain '%'",
        ["metadata.name"],
    ),
    (
        "label-key",
        BUNDLES,
        bundle(labels={"bad key": "v"}),
        'Bundle.bundler.dev "app" is invalid: metadata.labels: Invalid value: "bad key": '
        + NAME_PART,
        ["metadata.labels"],
    ),
    (
        "label-value-and-prefix",
        BUNDLES,
        bundle(labels={"Bad_Prefix/k": "-v"}),
        'Bundle.bundler.dev "app" is invalid: [metadata.labels: Invalid value: "Bad_Prefix/k": '
        "prefix part " + SUBDOMAIN + ', metadata.labels: Invalid value: "-v": ' + LABEL_VALUE + "]",
        ["metadata.labels", "metadata.labels"],
    ),
    (
        "label-value-too-long",
        BUNDLES,
        bundle(labels={"k": "v" * 64}),
        f'Bundle.bundler.dev "app" is invalid: metadata.labels: Invalid value: "{"v" * 64}": '
        "must be no more than 63 bytes",
        ["metadata.labels"],
    ),
    (
        "annotations-too-large",
        BUNDLES,
        bundle(annotations={"k": "v" * 262144}),
        'Bundle.bundler.dev "app" is invalid: metadata.annotations: Too long: may not be more '
        "than 262144 bytes",
        ["metadata.annotations"],
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "message", "fields"),
    [(p, b, m, f) for _, p, b, m, f in INVALID],
    ids=[i for i, _, _, _, _ in INVALID],
)
def test_metadata_is_checked_as_the_api_server_checks_it(
    api: Http, path: str, body: Obj, message: str, fields: list[str]
) -> None:
    code, status = api.call("POST", path, body)
    assert (code, status["reason"], status["message"]) == (422, "Invalid", message)
    assert [c["field"] for c in status["details"]["causes"]] == fields


def test_labels_are_checked_on_updates_too(api: Http) -> None:
    api.call("POST", BUNDLES, bundle())
    patch = {"metadata": {"labels": {"k": "not ok"}}}
    code, status = api.call("PATCH", f"{BUNDLES}/app", patch, headers=MERGE)
    assert (code, status["details"]["causes"][0]["field"]) == (422, "metadata.labels")


@pytest.mark.parametrize(
    "labels",
    [{"example.com/MyName": "my_value"}, {"k": ""}, {"a.b-c_d": "1.2-3_4"}],
    ids=["prefixed", "empty-value", "all-characters"],
)
def test_valid_labels_are_accepted(api: Http, labels: dict[str, str]) -> None:
    assert api.call("POST", BUNDLES, bundle(labels=labels))[0] == 201
