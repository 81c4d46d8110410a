"""Which Secrets of a workspace a Bundle may name as registry credentials (`spec.helm.secretRef`,
`spec.images[].secretRef`).

The manager sends such a Secret to the registry the Bundle names and copies it into the namespace
of every cluster the Bundle targets, where that cluster's agent can read it. A Bundle's author
need not be able to read the Secrets of the workspace, so naming one must not be a way to reach
it: only Secrets meant as registry credentials are used, whoever names them (design §8):
- type `kubernetes.io/dockerconfigjson` or `kubernetes.io/basic-auth`;
- type `Opaque` (Flux's own layout: `username` and `password`) only when labelled
  `bundler.dev/registry-credentials: "true"` by whoever keeps it;
- never the kubeconfig Secret of a Cluster of the workspace (whatever its type), a Cluster API
  Secret (`cluster.x-k8s.io/secret`: kubeconfigs, certificates), a ServiceAccount token or a
  bootstrap token, nor any other type.

Pure: the Secret as the API returns it in, the reason for a refusal (or None) out. The reason names
the Secret's type and labels, never its data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LABEL_REGISTRY_CREDENTIALS = "bundler.dev/registry-credentials"
REGISTRY_CREDENTIALS_MARK = "true"
DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
BASIC_AUTH = "kubernetes.io/basic-auth"
OPAQUE = "Opaque"
REGISTRY_CREDENTIAL_TYPES = frozenset({DOCKER_CONFIG_JSON, BASIC_AUTH})

RULE = (
    f"only Secrets of type {DOCKER_CONFIG_JSON} or {BASIC_AUTH}, or of type {OPAQUE} labelled "
    f"{LABEL_REGISTRY_CREDENTIALS}={REGISTRY_CREDENTIALS_MARK}, are used as registry credentials "
    "and copied to clusters"
)

# Types that hold a cluster's credentials, named for what they are.
_NEVER = {
    "cluster.x-k8s.io/secret": "a Cluster API Secret (a kubeconfig or certificates)",
    "kubernetes.io/service-account-token": "a ServiceAccount token",
    "bootstrap.kubernetes.io/token": "a bootstrap token",
}


def cluster_credentials_refusal(
    secret: Mapping[str, Any], kubeconfig_of: Mapping[str, str] | None = None
) -> str | None:
    """Why the workspace Secret `secret` holds a cluster's credentials, which are never sent
    anywhere whoever names them (None: it does not). `kubeconfig_of` maps the kubeconfig Secret
    names of the workspace's Clusters to those Clusters."""
    name = str((secret.get("metadata") or {}).get("name") or "")
    kind = secret_type(secret)
    cluster = (kubeconfig_of or {}).get(name)
    if cluster is not None:
        return f"it is the kubeconfig Secret of Cluster {cluster}"
    if kind in _NEVER:
        return f"it is {_NEVER[kind]} (type {kind})"
    return None


def secret_type(secret: Mapping[str, Any]) -> str:
    """The Secret's type, Opaque when unset (as the API server defaults it)."""
    return str(secret.get("type") or OPAQUE)


def credentials_refusal(
    secret: Mapping[str, Any], kubeconfig_of: Mapping[str, str] | None = None
) -> str | None:
    """Why the workspace Secret `secret` may not serve as registry credentials, or None when it
    may. `kubeconfig_of` maps the kubeconfig Secret names of the workspace's Clusters to those
    Clusters."""
    meta = secret.get("metadata") or {}
    kind = secret_type(secret)
    never = cluster_credentials_refusal(secret, kubeconfig_of)
    if never is not None:
        return never
    if kind in REGISTRY_CREDENTIAL_TYPES:
        return None
    labels = meta.get("labels") or {}
    if kind == OPAQUE and labels.get(LABEL_REGISTRY_CREDENTIALS) == REGISTRY_CREDENTIALS_MARK:
        return None
    if kind == OPAQUE:
        return f"it is of type {OPAQUE} without the label {LABEL_REGISTRY_CREDENTIALS}=true"
    return f"it is of type {kind}"


def refusal_message(workspace: str, name: str, why: str) -> str:
    """The whole message of a refusal: the Secret, why, and the rule."""
    return f"Secret {workspace}/{name} is not used as registry credentials: {why}; {RULE}"
