"""Request bodies in Kubernetes' Protobuf encoding: what recent kubectl (1.36, 1.37) sends from its
typed clients (`kubectl create namespace|secret|role|...`) is read as the JSON of the same
object, on the stand-in as on kube-apiserver; DeleteOptions too; a custom resource is refused with
415. Then the decoding itself, field by field."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import CUSTOM_RESOURCE_DEFINITION, SECRET, Verb
from bundler.apiserver.protobuf import as_json
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.statuses import HttpError
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    CRDS,
    PROTOBUF,
    SECRETS,
    WIDGETS,
    Http,
    pb_field,
    protobuf_object,
    widget,
)
from tests.support.kubectl import find_kubectl

KUBECTL, NO_KUBECTL = find_kubectl()
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)
# Bytes that are no UTF-8, from a file into a Secret.
BINARY = b"\x00\xff\xfe"
RBAC = "rbac.authorization.k8s.io"


def kubectl(backend: Backend, ns: str, tmp_path: Path, *args: str) -> Any:
    """The object `kubectl create ...` got back from the server, and that kubectl sent Protobuf."""
    config = backend.kubeconfig(tmp_path / "kubeconfig", ns)
    done = subprocess.run(
        [str(KUBECTL), f"--kubeconfig={config}", "create", *args, "-o", "json", "-v=9"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"Content-Type: application/vnd.kubernetes.protobuf"' in done.stderr.replace("-H ", "")
    return json.loads(done.stdout)


# (kubectl create arguments, `{ns}` the test's namespace; the object's fields but metadata)
CREATED = [
    pytest.param(
        ["secret", "generic", "creds", "--from-literal=token=s3cret", "--from-file=blob=blob.bin"],
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "data": {
                "token": base64.b64encode(b"s3cret").decode(),
                "blob": base64.b64encode(BINARY).decode(),
            },
            "type": "Opaque",
        },
        id="secret",
    ),
    pytest.param(
        ["serviceaccount", "robot"],
        {"apiVersion": "v1", "kind": "ServiceAccount"},
        id="serviceaccount",
    ),
    pytest.param(
        ["role", "reader", "--verb=get,list", "--resource=secrets", "--resource-name=creds"],
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "Role",
            "rules": [
                {
                    "verbs": ["get", "list"],
                    "apiGroups": [""],
                    "resources": ["secrets"],
                    "resourceNames": ["creds"],
                }
            ],
        },
        id="role",
    ),
    pytest.param(
        ["rolebinding", "readers", "--role=reader", "--user=alice", "--serviceaccount={ns}:robot"],
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "RoleBinding",
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "reader"},
            "subjects": [
                {"kind": "User", "apiGroup": RBAC, "name": "alice"},
                {"kind": "ServiceAccount", "name": "robot", "namespace": "{ns}"},
            ],
        },
        id="rolebinding",
    ),
    pytest.param(
        ["clusterrole", "{ns}-aggregated", "--aggregation-rule=example.com/aggregate=true"],
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRole",
            "rules": None,
            "aggregationRule": {
                "clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate": "true"}}]
            },
        },
        id="clusterrole",
    ),
    pytest.param(
        ["clusterrolebinding", "{ns}-viewers", "--clusterrole=view", "--group=devs"],
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "apiGroup": RBAC, "name": "devs"}],
        },
        id="clusterrolebinding",
    ),
    pytest.param(
        ["namespace", "{ns}-more"],
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        },
        id="namespace",
    ),
]


@needs_kubectl
@pytest.mark.parametrize(("args", "expected"), CREATED)
def test_kubectl_create_sends_protobuf_that_reads_as_the_object(
    backend: Backend, ns: str, tmp_path: Path, args: list[str], expected: dict[str, Any]
) -> None:
    (tmp_path / "blob.bin").write_bytes(BINARY)
    created = kubectl(backend, ns, tmp_path, *[arg.replace("{ns}", ns) for arg in args])
    name = args[2] if args[0] == "secret" else args[1]
    assert created["metadata"]["name"] == name.replace("{ns}", ns)
    fields = {key: value for key, value in created.items() if key != "metadata"}
    assert fields == json.loads(json.dumps(expected).replace("{ns}", ns))


def delete_options(uid: str) -> bytes:
    preconditions = pb_field(1, uid)
    return protobuf_object("v1", "DeleteOptions", pb_field(2, preconditions))


def test_delete_options_in_protobuf_are_read(api: Http) -> None:
    path = SECRETS
    code, created = api.call("POST", path, {"metadata": {"name": "kept"}})
    assert code == 201, created
    refused = api.send(
        "DELETE", f"{path}/kept", raw=delete_options("not-its-uid"), headers=PROTOBUF
    )
    assert (refused.status_code, refused.json()["reason"]) == (409, "Conflict")
    uid = created["metadata"]["uid"]
    deleted = api.send("DELETE", f"{path}/kept", raw=delete_options(uid), headers=PROTOBUF)
    assert deleted.status_code == 200, deleted.text


def test_a_body_without_the_protobuf_prefix_is_a_bad_request(api: Http) -> None:
    answer = api.send("POST", SECRETS, raw=b"{}", headers=PROTOBUF).json()
    assert (answer["code"], answer["reason"]) == (400, "BadRequest")
    assert "expected prefix [107 56 115 0]" in answer["message"]


@pytest.mark.deliberate_difference(
    "kube-apiserver v1.36.3 panics on a custom resource sent as Protobuf (a nil dereference in "
    "apiextensions-apiserver's schemaCoercingDecoder) and drops the connection; the stand-in "
    "answers the 415 its media-type negotiation gives for an encoding it does not take"
)
def test_a_custom_resource_in_protobuf_is_an_unsupported_media_type(widgets: Http) -> None:
    body = protobuf_object("example.com/v1", "Widget", pb_field(1, pb_field(1, "w")))
    answer = widgets.send("POST", WIDGETS, raw=body, headers=PROTOBUF).json()
    assert (answer["code"], answer["reason"]) == (415, "UnsupportedMediaType")
    assert answer["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml"
    )
    code, _ = widgets.call("POST", WIDGETS, widget("w"))
    assert code == 201


@pytest.mark.deliberate_difference(
    "the stand-in reads Protobuf only for the kinds kubectl's typed clients write "
    "(kubectl writes CustomResourceDefinitions as JSON)"
)
def test_a_crd_in_protobuf_is_refused_by_the_stand_in(widgets: Http) -> None:
    body = protobuf_object(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", pb_field(1, pb_field(1, "x"))
    )
    answer = widgets.send("POST", CRDS, raw=body, headers=PROTOBUF).json()
    assert (answer["code"], answer["reason"]) == (415, "UnsupportedMediaType")


# --- the decoding, field by field (no server) ---

SECRETS_ROUTE = ResourceRoute(SECRET, "ns", None)


def read(message: bytes) -> Any:
    return json.loads(as_json(SECRETS_ROUTE, Verb.CREATE, protobuf_object("v1", "Secret", message)))


def meta(*fields: bytes) -> bytes:
    return pb_field(1, b"".join(fields))


def timestamp(seconds: int, nanos: int = 0) -> bytes:
    return pb_field(1, seconds) + (pb_field(2, nanos) if nanos else b"")


def entry(key: str, value: bytes | str) -> bytes:
    return pb_field(1, key) + pb_field(2, value)


NEGATIVE_ONE = (1 << 64) - 1  # an int64 of -1 on the wire


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (b"", {"apiVersion": "v1", "kind": "Secret", "metadata": {}}),
        (
            meta(pb_field(1, "a"), pb_field(3, ""), pb_field(7, 0)),
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}},
        ),
        (
            meta(pb_field(8, timestamp(1_700_000_000, 999_999_999))),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"creationTimestamp": "2023-11-14T22:13:20Z"},
            },
        ),
        (
            meta(pb_field(8, b""), pb_field(9, b"")),
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"deletionTimestamp": None}},
        ),
        (
            meta(pb_field(10, NEGATIVE_ONE), pb_field(7, 3)),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"generation": 3, "deletionGracePeriodSeconds": -1},
            },
        ),
        (
            pb_field(5, 0) + pb_field(2, entry("b", b"\xff")) + pb_field(4, entry("k", "v")),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {},
                "immutable": False,
                "data": {"b": "/w=="},
                "stringData": {"k": "v"},
            },
        ),
        (
            meta(pb_field(1, b"bad\xffname"), pb_field(99, "unknown field")),
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad\ufffdname"}},
        ),
        (
            meta(
                pb_field(13, pb_field(1, "Bundle") + pb_field(6, 0)),
                pb_field(17, pb_field(1, "kubectl") + pb_field(7, pb_field(1, b'{"f:a":{}}'))),
            ),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "ownerReferences": [
                        {
                            "apiVersion": "",
                            "kind": "Bundle",
                            "name": "",
                            "uid": "",
                            "controller": False,
                        }
                    ],
                    "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:a": {}}}],
                },
            },
        ),
    ],
    ids=[
        "empty",
        "zero-values-left-out",
        "time-to-the-second",
        "zero-times",
        "negative-int64",
        "pointer-false-kept-maps",
        "invalid-utf8-unknown-field",
        "required-fields-and-raw-json",
    ],
)
def test_a_message_reads_as_go_writes_its_value(message: bytes, expected: Any) -> None:
    assert read(message) == expected


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        (b"\x0a\x05ab", "a length beyond the end of the message"),
        (b"\x08\xff\xff", "a varint that does not end"),
        (b"\x0b", "wire type 3 of field 1 is not supported"),
        (b"\x00\x01", "a field numbered 0"),
        (pb_field(1, 5), "a varint where a length-delimited field belongs"),
        (meta(pb_field(7, "x")), "a length-delimited field where a varint belongs"),
        (meta(pb_field(8, timestamp(1 << 62))), "a timestamp out of range"),
    ],
    ids=[
        "truncated",
        "endless-varint",
        "group",
        "field-zero",
        "varint-for-a-message",
        "bytes-for-an-int",
        "time-out-of-range",
    ],
)
def test_a_broken_message_is_a_bad_request_naming_the_cause(message: bytes, cause: str) -> None:
    with pytest.raises(HttpError) as raised:
        read(message)
    assert raised.value.code == 400
    assert raised.value.message.startswith(
        f"the request body is not a valid Protobuf object: {cause}"
    )


def test_patches_are_left_to_the_patch_handler_and_crds_are_refused() -> None:
    body = protobuf_object("v1", "Secret", b"")
    assert as_json(SECRETS_ROUTE, Verb.PATCH, body) == body
    with pytest.raises(HttpError) as raised:
        as_json(ResourceRoute(CUSTOM_RESOURCE_DEFINITION, None, None), Verb.CREATE, body)
    assert raised.value.code == 415
