"""Kubeconfig files for the test clusters: the admin's (client certificate) and token-based ones.

Every file is self-contained (certificates embedded), as Flux requires of the kubeconfig Secrets
it reads in remote mode and as `bundler agent-kubeconfig` writes them.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig(
    server: str, ca_cert: Path, user: dict[str, Any], *, name: str, namespace: str | None = None
) -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": name, "user": name}
    if namespace is not None:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {"server": server, "certificate-authority-data": _b64(ca_cert)},
            }
        ],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": context}],
        "current-context": name,
    }


def client_certificate_user(cert: Path, key: Path) -> dict[str, Any]:
    return {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)}


def write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path
