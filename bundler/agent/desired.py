"""The downstream objects one BundleDeployment needs: Flux source, HelmRelease, credentials Secret.

The Flux objects come from bundler.core.flux. The agent adds its identity labels (so its caches see
exactly what it wrote), the keep-resources annotation on the HelmRelease (so an undeploy after the
BundleDeployment is gone still knows to leave the release installed), and, in pull mode, a copy of
the repository credentials Secret: the manager copies it into the cluster namespace, the agent
copies it next to the source on its cluster. In remote mode the source reads it where it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bundler.agent.config import AgentConfig
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY, SECRET, Resource
from bundler.core.agent.plan import ANNOTATION_KEEP_RESOURCES
from bundler.core.flux import build_flux_objects, flux_labels, release_object_name
from bundler.core.flux import bundle_name as bundle_of
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.core.naming import DNS1123_SUBDOMAIN_MAX, shorten_name
from bundler.store.protocol import Obj

_KIND_RESOURCES = {res.kind: res for res in (HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY)}


@dataclass(frozen=True)
class Desired:
    """The objects to write, in apply order."""

    objects: list[tuple[Resource, Obj]]

    @property
    def release(self) -> Obj:
        return next(obj for res, obj in self.objects if res == HELM_RELEASE)

    def names(self) -> set[tuple[str, str]]:
        return {(res.plural, obj["metadata"]["name"]) for res, obj in self.objects}


def credentials_secret_name(bundle: str) -> str:
    return shorten_name(f"{release_object_name(bundle)}-credentials", DNS1123_SUBDOMAIN_MAX)


def registry_secret_name(bd: BundleDeployment, config: AgentConfig) -> str | None:
    """The Secret the source reads credentials from, in the Flux namespace (None: no secretRef)."""
    ref = bd.spec.options.helm.secretRef
    if ref is None:
        return None
    if config.mode is AgentMode.REMOTE:
        return ref.name
    return credentials_secret_name(bundle_of(bd))


def desired_objects(bd: BundleDeployment, config: AgentConfig, credentials: Obj | None) -> Desired:
    """Everything to write for `bd`; `credentials` is the management copy of the secretRef
    Secret (pull mode only). InvalidInputError when the options cannot become Flux objects."""
    flux = build_flux_objects(bd, config.target(registry_secret_name(bd, config)))
    identity = config.owned_labels()
    objects: list[tuple[Resource, Obj]] = []
    if credentials is not None:
        objects.append((SECRET, _credentials_copy(bd, config, credentials)))
    for obj in flux.all():
        obj["metadata"]["labels"].update(identity)
        objects.append((_KIND_RESOURCES[obj["kind"]], obj))
    if bd.spec.options.keepResources:
        flux.release["metadata"]["annotations"][ANNOTATION_KEEP_RESOURCES] = "true"
    return Desired(objects)


def _credentials_copy(bd: BundleDeployment, config: AgentConfig, source: Obj) -> Obj:
    labels: dict[str, str] = {**flux_labels(bd), **config.owned_labels()}
    body: dict[str, Any] = {
        "apiVersion": SECRET.api_version,
        "kind": SECRET.kind,
        "metadata": {
            "name": credentials_secret_name(bundle_of(bd)),
            "namespace": config.flux_namespace,
            "labels": labels,
            "annotations": {ANNOTATION_CLUSTER: config.ref},
        },
        "type": source.get("type") or "Opaque",
        "data": dict(source.get("data") or {}),
    }
    return body


def keeps_release(release: Obj) -> bool:
    annotations = release.get("metadata", {}).get("annotations") or {}
    return annotations.get(ANNOTATION_KEEP_RESOURCES) == "true"
