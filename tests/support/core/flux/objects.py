"""BundleDeployments to build Flux objects from, and the build that validates what it built
against the Flux CRD schemas (shared by the tests of bundler.core.flux)."""

from __future__ import annotations

from typing import Any

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.core.flux import FluxTarget
from bundler.core.flux.helm_objects import FluxObjects, build_flux_objects
from tests.support.schemas import validate

PULL = FluxTarget(cluster="fleet-default/prod-eu-1")
CLUSTER_NAMESPACE = "cluster-fleet-default-prod-eu-1-1a2b3c4d5e6f"
REMOTE = FluxTarget(
    cluster="fleet-default/prod-eu-1",
    namespace=CLUSTER_NAMESPACE,
    mode=AgentMode.REMOTE,
    kubeconfig_secret="prod-eu-1-kubeconfig",
)
HTTP_REPO = "https://stefanprodan.github.io/podinfo"
OCI_REPO = "oci://registry.example/charts"


def make_bd(
    *,
    bundle: str = "podinfo",
    name: str | None = None,
    namespace: str = "podinfo",
    depends_on: tuple[str, ...] = (),
    labels: dict[str, str] | None = None,
    **helm: Any,
) -> BundleDeployment:
    helm = {"repo": HTTP_REPO, "chart": "podinfo", "version": "6.1.2", **helm}
    default_labels = {
        "bundler.dev/bundle-name": bundle,
        "bundler.dev/bundle-namespace": "fleet-default",
        "bundler.dev/cluster-name": "prod-eu-1",
        "bundler.dev/cluster-namespace": "fleet-default",
    }
    return BundleDeployment.model_validate(
        {
            "metadata": {
                "name": name or bundle,
                "namespace": CLUSTER_NAMESPACE,
                "labels": default_labels if labels is None else labels,
            },
            "spec": {
                "deploymentID": "s-0123abcd",
                "options": {
                    "helm": {k: v for k, v in helm.items() if v is not None},
                    "namespace": namespace,
                    "dependsOn": [{"name": d} for d in depends_on],
                },
            },
        }
    )


def build(bd: BundleDeployment, target: FluxTarget = PULL) -> FluxObjects:
    objects = build_flux_objects(bd, target)
    for obj in objects.all():
        validate(obj)
    return objects


def dig(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj[part] if isinstance(obj, dict) else obj[int(part)]
    return obj


MISSING = object()


ARTIFACT_REPO = "oci://registry.example/manifests/podinfo"


def make_kustomize_bd(
    *, bundle: str = "podinfo", namespace: str = "podinfo", **kustomize: Any
) -> BundleDeployment:
    """A BundleDeployment of Kustomize manifests from an OCI artifact (tag 1.0.0) unless
    `kustomize` gives its own source."""
    base = make_bd(bundle=bundle, namespace=namespace)
    options = base.spec.options.to_wire()
    options.pop("helm")
    options["kustomize"] = {"source": {"oci": {"url": ARTIFACT_REPO, "tag": "1.0.0"}}, **kustomize}
    spec = {**base.spec.to_wire(), "options": options}
    return BundleDeployment.model_validate({**base.to_wire(), "spec": spec})
