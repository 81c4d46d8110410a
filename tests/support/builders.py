"""Small constructors for API objects in tests: readable tables instead of YAML blobs."""

from __future__ import annotations

from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.helm import HelmOptions
from bundler.core.labels import (
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)

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


ARTIFACT = "oci://registry.example/manifests/app"


def kustomize_bundle(
    targets: list[dict[str, Any]] | None = None,
    name: str = "app",
    kustomize: dict[str, Any] | None = None,
    **spec: Any,
) -> Bundle:
    """A Bundle of Kustomize manifests from an OCI artifact (tag 1.0.0) unless `kustomize`
    gives its own source; `kustomize` is laid over that, field by field."""
    base = {"source": {"oci": {"url": ARTIFACT, "tag": "1.0.0"}}, "path": "./deploy"}
    return Bundle.model_validate(
        {
            "metadata": {"name": name, "namespace": WS},
            "spec": {"kustomize": {**base, **(kustomize or {})}, "targets": targets or [], **spec},
        }
    )


# Conditions an agent reports on a BundleDeployment whose release failed.
UPGRADE_FAILED = {
    "type": "Ready",
    "status": "False",
    "reason": "UpgradeFailed",
    "message": "Helm upgrade failed: timed out",
}
APPLY_FAILED = {
    "type": "Deployed",
    "status": "False",
    "reason": "ApplyFailed",
    "message": "namespace podinfo is forbidden",
}


def deployment(
    deployment_id: str = "v2",
    applied: str | None = "v2",
    *,
    ready: bool = True,
    staged: str | None = None,
    non_modified: bool = True,
    conditions: list[dict[str, Any]] | None = None,
    generation: int | None = None,
    status: bool = True,
    name: str = "app",
) -> BundleDeployment:
    """A BundleDeployment as the agent would have left it; `status=False`: never reported."""
    spec: dict[str, Any] = {
        "options": {
            "helm": {"repo": "https://charts.example.com", "chart": "app"},
            "namespace": "app",
        },
        "deploymentID": deployment_id,
    }
    if staged is not None:
        spec["stagedDeploymentID"] = staged
    obj: dict[str, Any] = {"metadata": {"name": name, "generation": generation}, "spec": spec}
    if status:
        obj["status"] = {
            "appliedDeploymentID": applied,
            "ready": ready,
            "nonModified": non_modified,
            "conditions": conditions or [],
        }
    return BundleDeployment.model_validate(obj)


def placed_deployment(
    bundle_name: str, cluster_name: str, namespace: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    """`deployment(**kwargs)` as the manager places it for Bundle `bundle_name` on Cluster
    `cluster_name` of WS: in its cluster namespace (default `cluster-<cluster>`), named after the
    bundle unless told, with bundler's labels; in wire form."""
    obj = deployment(**{"name": bundle_name, **kwargs}).to_wire()
    obj["metadata"]["namespace"] = namespace or f"cluster-{cluster_name}"
    obj["metadata"]["labels"] = {
        LABEL_BUNDLE_NAMESPACE: WS,
        LABEL_BUNDLE_NAME: bundle_name,
        LABEL_CLUSTER_NAMESPACE: WS,
        LABEL_CLUSTER_NAME: cluster_name,
    }
    return obj


def helm_of(options: DeploymentOptions) -> HelmOptions:
    """The Helm options of a Helm Bundle's deployment (asserted present)."""
    assert options.helm is not None, "not a Helm deployment"
    return options.helm
