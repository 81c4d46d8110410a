"""The endpoint of a loaded kubeconfig: its server and its trust, as the client loaded them."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.core.agent.kubeconfig import ApiEndpoint
from bundler.errors import InvalidInputError
from bundler.kube.endpoint import load_store_and_endpoint

CA = b"-----BEGIN CERTIFICATE-----\nmanagement\n-----END CERTIFICATE-----\n"
CA_DATA = base64.b64encode(CA).decode()


def kubeconfig(cluster: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": "s3cr3t-token"}}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "main",
    }


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [
        (
            {"server": "https://mgmt.example:6443", "certificate-authority-data": CA_DATA},
            ApiEndpoint("https://mgmt.example:6443", CA),
        ),
        (
            {"server": "https://mgmt.example:6443", "certificate-authority": "ca.pem"},
            ApiEndpoint("https://mgmt.example:6443", CA),
        ),
        (
            {"server": "https://mgmt.example:6443/", "insecure-skip-tls-verify": True},
            ApiEndpoint("https://mgmt.example:6443", insecure=True),
        ),
        ({"server": "https://mgmt.example"}, ApiEndpoint("https://mgmt.example")),
        ({"server": "http://127.0.0.1:8080"}, ApiEndpoint("http://127.0.0.1:8080")),
    ],
    ids=["inline-ca", "ca-file-relative", "insecure", "system-trust", "plain-http"],
)
def test_endpoint_as_loaded(tmp_path: Path, cluster: dict[str, Any], expected: ApiEndpoint) -> None:
    (tmp_path / "ca.pem").write_bytes(CA)
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(kubeconfig(cluster)))
    store, endpoint = load_store_and_endpoint(str(path))
    store.close()
    assert endpoint == expected


def test_unloadable_kubeconfig_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as raised:
        load_store_and_endpoint(str(tmp_path / "missing"))
    assert "missing" in str(raised.value)
