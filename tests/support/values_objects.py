"""Objects of a workspace that Bundles name as management values (`valuesFrom` with `source:
Management`), and the table of which ones are delivered, shared by the rule's own tests and the
manager's."""

from __future__ import annotations

import base64
from typing import Any

from tests.support.builders import WS

DELIVER = {"bundler.dev/deliver": "true"}
VALUES_YAML = "greeting: from-management\n"


def encoded(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def values_secret(
    name: str,
    data: dict[str, str] | None = None,
    *,
    kind: str | None = "Opaque",
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Secret of the workspace (labelled for delivery unless `labels` says otherwise), its
    `data` given decoded; `kind` None: no type, which the API server makes Opaque."""
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": WS,
            "labels": DELIVER if labels is None else labels,
        },
        "data": {k: encoded(v) for k, v in (data or {"values.yaml": VALUES_YAML}).items()},
    }
    if kind is not None:
        secret["type"] = kind
    return secret


def values_config_map(
    name: str, data: dict[str, str] | None = None, *, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """A ConfigMap of the workspace, labelled for delivery unless `labels` says otherwise."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": WS,
            "labels": DELIVER if labels is None else labels,
        },
        "data": data or {"values.yaml": VALUES_YAML},
    }


def management(kind: str, name: str, **fields: Any) -> dict[str, Any]:
    """A valuesFrom entry naming an object of the workspace."""
    return {"kind": kind, "name": name, "source": "Management", **fields}


KUBECONFIG = "apiVersion: v1\nkind: Config\nusers: [{name: admin, user: {token: ADMIN-TOKEN}}]\n"
SECRET_DATA = {"values.yaml": "password: S3CRET-VALUE\n"}

# Objects a Bundle may name as management values, and those it may not:
# (id, the object, a Cluster naming it as its kubeconfig, refused because ...; None: delivered).
DELIVERY_RULE_CASES: list[tuple[str, dict[str, Any], bool, str | None]] = [
    ("configmap-labelled", values_config_map("vals"), False, None),
    (
        "configmap-unlabelled",
        values_config_map("vals", labels={}),
        False,
        "it is not labelled bundler.dev/deliver=true",
    ),
    ("opaque-labelled", values_secret("vals", SECRET_DATA), False, None),
    ("no-type-labelled", values_secret("vals", SECRET_DATA, kind=None), False, None),
    (
        "opaque-unlabelled",
        values_secret("vals", SECRET_DATA, labels={}),
        False,
        "it is not labelled bundler.dev/deliver=true",
    ),
    (
        "opaque-labelled-false",
        values_secret("vals", SECRET_DATA, labels={"bundler.dev/deliver": "false"}),
        False,
        "it is not labelled bundler.dev/deliver=true",
    ),
    (
        "capi-kubeconfig",
        values_secret("vals", {"value": KUBECONFIG}, kind="cluster.x-k8s.io/secret"),
        False,
        "it is a Cluster API Secret (a kubeconfig or certificates) (type cluster.x-k8s.io/secret)",
    ),
    (
        "capi-labelled-opaque",
        values_secret(
            "vals", {"value": KUBECONFIG}, labels={**DELIVER, "cluster.x-k8s.io/cluster-name": "c"}
        ),
        False,
        "it is a Cluster API Secret (labelled cluster.x-k8s.io/cluster-name)",
    ),
    (
        "a-clusters-kubeconfig",
        values_secret("vals", {"value": KUBECONFIG}),
        True,
        "it is the kubeconfig Secret of Cluster {ws}/victim",
    ),
    (
        "service-account-token",
        values_secret("vals", {"token": "SA-TOKEN"}, kind="kubernetes.io/service-account-token"),
        False,
        "it is a ServiceAccount token (type kubernetes.io/service-account-token)",
    ),
    (
        "bootstrap-token",
        values_secret(
            "vals",
            {"token-id": "abcdef", "token-secret": "0123456789abcdef"},
            kind="bootstrap.kubernetes.io/token",
        ),
        False,
        "it is a bootstrap token (type bootstrap.kubernetes.io/token)",
    ),
    (
        "managed-by-bundler",
        values_secret(
            "vals",
            {"token": "AGENT-TOKEN"},
            labels={**DELIVER, "bundler.dev/managed-by": "bundler"},
        ),
        False,
        "it is managed by bundler (labelled bundler.dev/managed-by)",
    ),
    (
        "dockerconfigjson",
        values_secret(
            "vals", {".dockerconfigjson": '{"auths": {}}'}, kind="kubernetes.io/dockerconfigjson"
        ),
        False,
        "it is registry credentials (of type kubernetes.io/dockerconfigjson)",
    ),
    (
        "basic-auth",
        values_secret(
            "vals",
            {"username": "REG-USER", "password": "REG-PASS"},
            kind="kubernetes.io/basic-auth",
        ),
        False,
        "it is registry credentials (of type kubernetes.io/basic-auth)",
    ),
    (
        "registry-credentials-labelled",
        values_secret(
            "vals",
            {"username": "REG-USER", "password": "REG-PASS"},
            labels={**DELIVER, "bundler.dev/registry-credentials": "true"},
        ),
        False,
        "it is registry credentials (labelled bundler.dev/registry-credentials)",
    ),
    (
        "tls",
        values_secret("vals", {"tls.key": "KEY"}, kind="kubernetes.io/tls"),
        False,
        "it is of type kubernetes.io/tls",
    ),
]
