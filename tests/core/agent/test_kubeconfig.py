"""The pull-mode agent's kubeconfig: the token from its Secret, the server and how it is trusted,
the cluster namespace as the context's namespace; errors that never quote the token."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bundler.core.agent.kubeconfig import (
    AgentToken,
    ApiEndpoint,
    agent_endpoint,
    agent_kubeconfig,
    check_server_url,
    token_of,
)
from bundler.errors import InvalidInputError

TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln"
SECRET_CA = b"-----BEGIN CERTIFICATE-----\ncluster\n-----END CERTIFICATE-----\n"
MGMT_CA = b"-----BEGIN CERTIFICATE-----\nmanagement\n-----END CERTIFICATE-----\n"
NS = "cluster-ws-a-0123456789ab"


def b64(raw: bytes | str) -> str:
    return base64.b64encode(raw.encode() if isinstance(raw, str) else raw).decode()


def secret(data: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {"metadata": {"name": "bundler-agent-token", "namespace": NS}}
    if data is not None:
        found["data"] = data
    return found


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (None, None),
        ({}, None),
        ({"token": ""}, None),
        ({"token": b64(TOKEN), "ca.crt": b64(SECRET_CA)}, AgentToken(TOKEN, SECRET_CA)),
        ({"token": b64(TOKEN), "ca.crt": ""}, AgentToken(TOKEN, None)),
        ({"token": b64(TOKEN + "\n")}, AgentToken(TOKEN, None)),
    ],
    ids=["no-data", "empty-data", "empty-token", "token-and-ca", "no-ca", "trailing-newline"],
)
def test_token_of_secret(data: dict[str, Any] | None, expected: AgentToken | None) -> None:
    assert token_of(secret(data)) == expected


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"token": "not base64!"}, "data.token", "not valid base64"),
        ({"token": 7}, "data.token", "not a base64 string"),
        ({"token": b64("tok"), "ca.crt": "%%"}, "data.ca.crt", "not valid base64"),
        ({"token": b64(b"\xff\xfe")}, "data.token", "not a bearer token"),
    ],
    ids=["token-not-base64", "token-not-string", "ca-not-base64", "token-not-ascii"],
)
def test_malformed_secret_names_the_secret_and_field(
    data: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as raised:
        token_of(secret(data))
    assert (raised.value.obj, raised.value.field) == (f"Secret {NS}/bundler-agent-token", field)
    assert message in raised.value.message


def test_token_never_shows_in_repr() -> None:
    assert TOKEN not in repr(AgentToken(TOKEN, SECRET_CA))


@pytest.mark.parametrize(
    ("management", "token_ca", "server", "expected"),
    [
        (
            ApiEndpoint("https://10.0.0.1:6443", MGMT_CA),
            SECRET_CA,
            None,
            ApiEndpoint("https://10.0.0.1:6443", SECRET_CA),
        ),
        (
            ApiEndpoint("https://10.0.0.1:6443", insecure=True),
            SECRET_CA,
            "https://mgmt.example:6443",
            ApiEndpoint("https://mgmt.example:6443", SECRET_CA),
        ),
        (
            ApiEndpoint("https://10.0.0.1:6443", MGMT_CA),
            None,
            None,
            ApiEndpoint("https://10.0.0.1:6443", MGMT_CA),
        ),
        (
            ApiEndpoint("https://10.0.0.1:6443", insecure=True),
            None,
            "https://mgmt.example:6443",
            ApiEndpoint("https://mgmt.example:6443", insecure=True),
        ),
        (
            ApiEndpoint("https://api.example"),
            None,
            None,
            ApiEndpoint("https://api.example"),
        ),
    ],
    ids=[
        "secret-ca-wins",
        "secret-ca-replaces-insecure",
        "management-ca",
        "management-insecure",
        "system-trust",
    ],
)
def test_agent_endpoint(
    management: ApiEndpoint, token_ca: bytes | None, server: str | None, expected: ApiEndpoint
) -> None:
    assert agent_endpoint(management, AgentToken(TOKEN, token_ca), server) == expected


@pytest.mark.parametrize(
    ("endpoint", "cluster_entry"),
    [
        (
            ApiEndpoint("https://mgmt.example:6443", SECRET_CA),
            {"server": "https://mgmt.example:6443", "certificate-authority-data": b64(SECRET_CA)},
        ),
        (
            ApiEndpoint("https://mgmt.example:6443", insecure=True),
            {"server": "https://mgmt.example:6443", "insecure-skip-tls-verify": True},
        ),
        (ApiEndpoint("https://mgmt.example"), {"server": "https://mgmt.example"}),
    ],
    ids=["ca", "insecure", "system-trust"],
)
def test_agent_kubeconfig(endpoint: ApiEndpoint, cluster_entry: dict[str, Any]) -> None:
    config = agent_kubeconfig(endpoint, TOKEN, NS, "ws/a")
    assert config == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "bundler-management", "cluster": cluster_entry}],
        "users": [{"name": "bundler-agent@ws/a", "user": {"token": TOKEN}}],
        "contexts": [
            {
                "name": "bundler-agent@ws/a",
                "context": {
                    "cluster": "bundler-management",
                    "user": "bundler-agent@ws/a",
                    "namespace": NS,
                },
            }
        ],
        "current-context": "bundler-agent@ws/a",
    }


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://mgmt.example:6443", "https://mgmt.example:6443"),
        ("https://mgmt.example:6443/", "https://mgmt.example:6443"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("https://[fd00::1]:6443", "https://[fd00::1]:6443"),
    ],
    ids=["https", "trailing-slash", "http", "ipv6"],
)
def test_server_url_accepted(url: str, expected: str) -> None:
    assert check_server_url(url) == expected


@pytest.mark.parametrize(
    "url",
    ["mgmt.example:6443", "ftp://mgmt.example", "https://", "https://[fd00::1"],
    ids=["no-scheme", "other-scheme", "no-host", "broken-ipv6"],
)
def test_server_url_rejected(url: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        check_server_url(url)
    assert raised.value.field == "--server"
