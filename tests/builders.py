"""Small constructors for API objects in tests: readable tables instead of YAML blobs."""

from __future__ import annotations

from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup

WS = "fleet-default"


def cluster(name: str, labels: dict[str, str] | None = None, ns: str = WS, **spec: Any) -> Cluster:
    return Cluster.model_validate(
        {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": spec}
    )


def group(
    name: str, selector: dict[str, Any], labels: dict[str, str] | None = None
) -> ClusterGroup:
    return ClusterGroup.model_validate(
        {
            "metadata": {"name": name, "namespace": WS, "labels": labels or {}},
            "spec": {"selector": selector},
        }
    )


def bundle(
    targets: list[dict[str, Any]] | None = None,
    name: str = "app",
    helm: dict[str, Any] | None = None,
    **spec: Any,
) -> Bundle:
    base_helm = {"repo": "https://charts.example.com", "chart": "app", "version": "1.0.0"}
    return Bundle.model_validate(
        {
            "metadata": {"name": name, "namespace": WS},
            "spec": {"helm": {**base_helm, **(helm or {})}, "targets": targets or [], **spec},
        }
    )
