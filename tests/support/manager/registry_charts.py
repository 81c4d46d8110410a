"""Charts pushed to the test registries (docker-registry on 127.0.0.1) for the resolver tests, and
the Secret shapes a Bundle's `helm.secretRef` may name."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import requests

from bundler.oci import package
from bundler.oci.credentials import Credentials
from bundler.oci.layout import MANIFEST_MEDIA_TYPE
from bundler.oci.reference import parse_location
from bundler.oci.registry import RegistryOptions, push_chart
from tests.support.builders import WS
from tests.support.registry_fixtures import LocalRegistry
from tests.support.registry_images import put_blob

CHART = "demo"


def unique_path(test_name: str) -> str:
    """A repository path of its own for a test, so tests sharing a registry never collide."""
    return "t/" + re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")


def registry_credentials(registry: LocalRegistry) -> Credentials | None:
    if registry.username is None or registry.password is None:
        return None
    return Credentials(registry.username, registry.password)


def push(
    registry: LocalRegistry, path: str, version: str, workdir: Path, name: str = CHART
) -> None:
    """Package a small chart `name` at `version` and push it into `oci://<registry>/<path>`."""
    chart_dir = workdir / f"{name}-{version}"
    (chart_dir / "templates").mkdir(parents=True, exist_ok=True)
    (chart_dir / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: {version}\n")
    (chart_dir / "values.yaml").write_text("greeting: hello\n")
    (chart_dir / "templates" / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
    )
    options = RegistryOptions(
        credentials=registry_credentials(registry), plain_http=True, timeout=10
    )
    push_chart(package.build_archive(chart_dir), parse_location(registry.oci(path)), options)


def _encoded(data: dict[str, str]) -> dict[str, str]:
    return {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}


def docker_config_json(host: str, username: str, password: str) -> str:
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    return json.dumps({"auths": {host: {"auth": auth}}})


def dockerconfig_secret(name: str, host: str, username: str, password: str) -> dict[str, Any]:
    """A kubernetes.io/dockerconfigjson Secret in the workspace, as `kubectl create secret
    docker-registry` writes it."""
    config = docker_config_json(host, username, password)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": WS},
        "type": "kubernetes.io/dockerconfigjson",
        "data": _encoded({".dockerconfigjson": config}),
    }


def basic_auth_secret(name: str, username: str, password: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": WS},
        "type": "kubernetes.io/basic-auth",
        "data": _encoded({"username": username, "password": password}),
    }


USER_PASS = {"username": "tenant", "password": "s3cret-password"}
DOCKER_CONFIG = {".dockerconfigjson": docker_config_json("registry.example.com", "u", "s3cret")}


def typed_secret(
    name: str, kind: str | None, data: dict[str, str], labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """A Secret of the workspace of type `kind` (None: no type, which the API server makes
    Opaque), its `data` given decoded."""
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": WS, "labels": labels or {}},
        "data": _encoded(data),
    }
    if kind is not None:
        secret["type"] = kind
    return secret


KUBECONFIG = "apiVersion: v1\nkind: Config\nusers: [{name: admin, user: {token: ADMIN-TOKEN}}]\n"

# Secrets a Bundle may name as registry credentials, and those it may not:
# (id, the Secret, a Cluster naming it as its kubeconfig, refused because ...; None: used).
CREDENTIALS_RULE_CASES: list[tuple[str, dict[str, Any], bool, str | None]] = [
    ("basic-auth", typed_secret("creds", "kubernetes.io/basic-auth", USER_PASS), False, None),
    (
        "dockerconfigjson",
        typed_secret("creds", "kubernetes.io/dockerconfigjson", DOCKER_CONFIG),
        False,
        None,
    ),
    (
        "opaque-labelled",
        typed_secret("creds", "Opaque", USER_PASS, {"bundler.dev/registry-credentials": "true"}),
        False,
        None,
    ),
    (
        "capi-kubeconfig",
        typed_secret("creds", "cluster.x-k8s.io/secret", {"value": KUBECONFIG}),
        False,
        "it is a Cluster API Secret (a kubeconfig or certificates) (type cluster.x-k8s.io/secret)",
    ),
    (
        "service-account-token",
        typed_secret("creds", "kubernetes.io/service-account-token", {"token": "SA-TOKEN"}),
        False,
        "it is a ServiceAccount token",
    ),
    (
        "bootstrap-token",
        typed_secret(
            "creds",
            "bootstrap.kubernetes.io/token",
            {"token-id": "abcdef", "token-secret": "0123456789abcdef"},
        ),
        False,
        "it is a bootstrap token",
    ),
    (
        "opaque-unlabelled",
        typed_secret("creds", "Opaque", USER_PASS),
        False,
        "it is of type Opaque without the label bundler.dev/registry-credentials=true",
    ),
    ("no-type", typed_secret("creds", None, USER_PASS), False, "of type Opaque without the label"),
    (
        "another-clusters-kubeconfig",
        typed_secret("creds", "Opaque", {"value": KUBECONFIG}),
        True,
        "it is the kubeconfig Secret of Cluster {ws}/victim",
    ),
    (
        "kubeconfig-typed-as-basic-auth",
        typed_secret("creds", "kubernetes.io/basic-auth", USER_PASS),
        True,
        "it is the kubeconfig Secret of Cluster {ws}/victim",
    ),
    (
        "tls",
        typed_secret("creds", "kubernetes.io/tls", {"tls.key": "KEY"}),
        False,
        "type kubernetes.io/tls",
    ),
]


def push_not_a_chart(registry: LocalRegistry, path: str, tag: str) -> None:
    """Push an artifact that is not a Helm chart (an OCI image config) under `path/demo:tag`."""
    repository = f"{path}/{CHART}"
    config = {
        "mediaType": "application/vnd.oci.image.config.v1+json",
        **put_blob(registry, repository, b"{}"),
    }
    layer = {
        "mediaType": "application/vnd.oci.image.layer.v1.tar",
        **put_blob(registry, repository, b"x"),
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": config,
        "layers": [layer],
    }
    requests.put(
        f"{registry.base_url}/v2/{repository}/manifests/{tag}",
        data=json.dumps(manifest),
        headers={"Content-Type": MANIFEST_MEDIA_TYPE},
        timeout=10,
    ).raise_for_status()
