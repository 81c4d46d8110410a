"""The kubeconfig a pull-mode agent reaches the management cluster with, from its token Secret.

The agent authenticates as its Cluster's ServiceAccount (bundler.core.agent.identity) with the
token Kubernetes put in the `bundler-agent-token` Secret. The server is the one the platform
engineer names (else the management kubeconfig's); it is trusted through the cluster CA from the
Secret, else as the management kubeconfig trusts it (its CA, or not verifying at all). The context's
namespace is the cluster namespace, where the agent's BundleDeployments live. Pure: no I/O.

Tokens never appear in errors or reprs, only in the kubeconfig itself.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from bundler.core.agent.identity import AGENT_NAME, CA_KEY, TOKEN_KEY
from bundler.errors import InvalidInputError

Obj = dict[str, Any]

MANAGEMENT_CLUSTER_NAME = "bundler-management"
_SERVER_SCHEMES = ("https", "http")


@dataclass(frozen=True)
class ApiEndpoint:
    """Where an API server is and how a client trusts it: a CA bundle (PEM), or no verification
    (`insecure`), or neither (the system's trust store)."""

    server: str
    ca_pem: bytes | None = None
    insecure: bool = False


@dataclass(frozen=True)
class AgentToken:
    """What the token controller put in the Secret: the bearer token and the cluster CA, if any."""

    token: str = field(repr=False)
    ca_pem: bytes | None = None


def check_server_url(url: str, *, flag: str = "--server") -> str:
    """`url` if it is an http(s) URL with a host; InvalidInputError naming `flag` otherwise."""
    try:
        parts = urlsplit(url)
        usable = parts.scheme in _SERVER_SCHEMES and bool(parts.hostname)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        usable = False
    if not usable:
        raise InvalidInputError(
            f"{url!r} is not an API server URL (https://HOST[:PORT])", field=flag
        )
    return url.rstrip("/")


def token_of(secret: Obj) -> AgentToken | None:
    """The token in a service-account token Secret; None while Kubernetes has not filled it."""
    data = secret.get("data") or {}
    where = _describe(secret)
    token = _decode(data.get(TOKEN_KEY), where, TOKEN_KEY)
    if not token:
        return None
    try:
        text = token.decode("ascii").strip()
    except UnicodeDecodeError:
        raise InvalidInputError(
            "is not a bearer token (not ASCII)", obj=where, field=f"data.{TOKEN_KEY}"
        ) from None
    return AgentToken(token=text, ca_pem=_decode(data.get(CA_KEY), where, CA_KEY) or None)


def agent_endpoint(
    management: ApiEndpoint, token: AgentToken, server: str | None = None
) -> ApiEndpoint:
    """How the agent reaches the management cluster: `server` (else the management kubeconfig's),
    trusted through the CA from the Secret, else as the management kubeconfig trusts it."""
    url = server or management.server
    if token.ca_pem:
        return ApiEndpoint(server=url, ca_pem=token.ca_pem)
    return ApiEndpoint(server=url, ca_pem=management.ca_pem, insecure=management.insecure)


def agent_kubeconfig(endpoint: ApiEndpoint, token: str, namespace: str, cluster_ref: str) -> Obj:
    """A kubeconfig with one context: the agent of `cluster_ref` (`workspace/name`) in its
    cluster namespace on the management cluster."""
    name = f"{AGENT_NAME}@{cluster_ref}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": MANAGEMENT_CLUSTER_NAME, "cluster": _cluster_entry(endpoint)}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [
            {
                "name": name,
                "context": {
                    "cluster": MANAGEMENT_CLUSTER_NAME,
                    "user": name,
                    "namespace": namespace,
                },
            }
        ],
        "current-context": name,
    }


def _cluster_entry(endpoint: ApiEndpoint) -> Obj:
    entry: Obj = {"server": endpoint.server}
    if endpoint.ca_pem:
        entry["certificate-authority-data"] = base64.b64encode(endpoint.ca_pem).decode("ascii")
    elif endpoint.insecure:
        entry["insecure-skip-tls-verify"] = True
    return entry


def _decode(value: Any, where: str, key: str) -> bytes:
    """A Secret data value (base64); errors name the Secret and the key, never the value."""
    if value is None:
        return b""
    if not isinstance(value, str):
        raise InvalidInputError("is not a base64 string", obj=where, field=f"data.{key}")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise InvalidInputError("is not valid base64", obj=where, field=f"data.{key}") from None


def _describe(secret: Obj) -> str:
    meta = secret.get("metadata") or {}
    return f"Secret {meta.get('namespace')}/{meta.get('name')}"
