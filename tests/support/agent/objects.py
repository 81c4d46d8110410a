"""Small constructors for the agent tests: BundleDeployments as the manager writes them, and
HelmReleases as Flux leaves them."""

from __future__ import annotations

from typing import Any

from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions
from bundler.api.dependencies import DependsOn
from bundler.core.planning import plan_deployment
from bundler.store.protocol import Obj
from tests.support.builders import bundle, cluster

CLUSTER_NAME = "c1"
# Condition timestamps, and a HelmRelease history newest first, for the readings of releases.
NOW = "2024-01-01T00:00:00Z"
LATER = "2024-01-01T00:05:00Z"
HISTORY = [
    {"name": "app", "namespace": "apps", "chartVersion": "1.2.0", "version": 3},
    {"name": "app", "namespace": "apps", "chartVersion": "1.1.0", "version": 2},
]


def bd_object(
    name: str = "app",
    *,
    cluster_name: str = CLUSTER_NAME,
    version: str = "1.0.0",
    repo: str = "https://charts.example.com",
    values: dict[str, Any] | None = None,
    depends_on: tuple[str, ...] = (),
    keep: bool = False,
    paused: bool = False,
    secret: str | None = None,
    status: dict[str, Any] | None = None,
    values_from: list[dict[str, Any]] | None = None,
    management: list[dict[str, Any]] | None = None,
    health_checks: list[dict[str, Any]] | None = None,
) -> Obj:
    """The BundleDeployment object the manager would write for bundle `name` on `cluster_name`."""
    helm: dict[str, Any] = {"repo": repo, "chart": name, "version": version, "releaseName": name}
    if values:
        helm["values"] = values
    if values_from:
        helm["valuesFrom"] = values_from
    if secret:
        helm["secretRef"] = {"name": secret}
    options = DeploymentOptions.model_validate(
        {
            "helm": helm,
            "namespace": name,
            "dependsOn": [DependsOn(name=d).to_wire() for d in depends_on],
            "keepResources": keep,
            "managementValues": management,
            "healthChecks": health_checks,
        }
    )
    planned = plan_deployment(bundle(name=name), cluster(cluster_name), options)
    obj = planned.to_object()
    if paused:
        obj["spec"]["paused"] = True
    if status is not None:
        obj["status"] = status
    return obj


def kustomize_bd_object(name: str = "app", tag: str = "1.0.0") -> Obj:
    """The BundleDeployment the manager would write for a Kustomize bundle `name` (manifests from
    an OCI artifact at `tag`)."""
    source = {"oci": {"url": "oci://registry.example/manifests/app", "tag": tag}}
    options = DeploymentOptions.model_validate(
        {"kustomize": {"source": source, "path": "./deploy"}, "namespace": name}
    )
    return plan_deployment(bundle(name=name), cluster(CLUSTER_NAME), options).to_object()


def bd_model(**kwargs: Any) -> BundleDeployment:
    obj = bd_object(**kwargs)
    obj["metadata"]["generation"] = 1
    return BundleDeployment.model_validate(obj)


def ready_status(bd: Obj) -> dict[str, Any]:
    return {"appliedDeploymentID": bd["spec"]["deploymentID"], "ready": True}


def helm_release(
    *,
    generation: int = 1,
    observed: int | None = 1,
    ready: str | None = "True",
    reason: str = "InstallSucceeded",
    message: str = "Helm install succeeded",
    condition_generation: int | None = None,
    history: list[dict[str, Any]] | None = None,
    spec: dict[str, Any] | None = None,
    deleting: bool = False,
) -> Obj:
    """A HelmRelease `bundler-system/app` with the status fields Flux sets."""
    status: dict[str, Any] = {}
    if observed is not None:
        status["observedGeneration"] = observed
    if ready is not None:
        cond: dict[str, Any] = {"type": "Ready", "status": ready, "reason": reason}
        cond["message"] = message
        if condition_generation is not None:
            cond["observedGeneration"] = condition_generation
        status["conditions"] = [cond]
    if history is not None:
        status["history"] = history
    metadata: dict[str, Any] = {"name": "app", "namespace": "bundler-system"}
    metadata["generation"] = generation
    if deleting:
        metadata["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": metadata, "spec": spec or {}, "status": status}
