"""The downstream objects one BundleDeployment needs: Flux source, HelmRelease, credentials Secret.

The Flux objects come from bundler.core.flux. The agent adds its identity labels (so its caches see
exactly what it wrote), the keep-resources annotation on the HelmRelease (so an undeploy after the
BundleDeployment is gone still knows to leave the release installed), and, in pull mode, a copy of
the repository credentials Secret: the manager copies it into the cluster namespace, the agent
copies it next to the source on its cluster. In remote mode the source reads it where it is, and
the `valuesFrom` objects read on the downstream cluster are copied beside the HelmRelease, which
names the copies and nothing else (bundler.core.flux.values_copies).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.agent.config import AgentConfig
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY, SECRET, Resource
from bundler.core.agent.plan import ANNOTATION_KEEP_RESOURCES
from bundler.core.flux import build_flux_objects, flux_labels, release_object_name
from bundler.core.flux import bundle_name as bundle_of
from bundler.core.flux.values_copies import (
    CopyTooLargeError,
    copy_name,
    pointed_at_copies,
    values_copy,
)
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.core.naming import DNS1123_SUBDOMAIN_MAX, shorten_name
from bundler.store.protocol import Obj

# Reads a valuesFrom object (kind, name) on the downstream cluster; None when it does not exist.
ValuesReader = Callable[[str, str], Obj | None]

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


class ValuesUnavailableError(Exception):
    """A valuesFrom object cannot be copied: not optional and missing, or too large. Only a change
    on the downstream cluster fixes it, so it is reported and retried."""


def desired_objects(
    bd: BundleDeployment,
    config: AgentConfig,
    credentials: Obj | None,
    values: Sequence[Obj] = (),
) -> Desired:
    """Everything to write for `bd`; `credentials` is the management copy of the secretRef
    Secret (pull mode only), `values` the copies of its valuesFrom objects (remote mode only).
    InvalidInputError when the options cannot become Flux objects."""
    flux = build_flux_objects(bd, config.target(registry_secret_name(bd, config)))
    identity = config.owned_labels()
    objects: list[tuple[Resource, Obj]] = [(SECRET, copy) for copy in values]
    if credentials is not None:
        objects.append((SECRET, _credentials_copy(bd, config, credentials)))
    if config.mode is AgentMode.REMOTE and flux.release["spec"].get("valuesFrom"):
        names = _copy_names(bd)
        spec = flux.release["spec"]
        spec["valuesFrom"] = pointed_at_copies(spec["valuesFrom"], names)
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


def _copy_names(bd: BundleDeployment) -> dict[tuple[str, str], str]:
    """The copy's name for every valuesFrom entry, by the source's kind and name."""
    release = release_object_name(bundle_of(bd))
    refs = bd.spec.options.helm.valuesFrom or []
    return {(ref.kind.value, ref.name): copy_name(release, ref.kind, ref.name) for ref in refs}


def values_copies(bd: BundleDeployment, config: AgentConfig, read: ValuesReader) -> list[Obj]:
    """The copies of `bd`'s valuesFrom objects, read on the downstream cluster (remote mode).

    A missing object that is not optional, or one too large to copy, is ValuesUnavailableError.
    """
    names = _copy_names(bd)
    labels = {**flux_labels(bd), **config.owned_labels()}
    copies = []
    for ref in bd.spec.options.helm.valuesFrom or []:
        where = f"{ref.kind.value} {config.agent_namespace}/{ref.name}"
        source = read(ref.kind.value, ref.name)
        if source is None:
            if ref.optional:
                continue
            raise ValuesUnavailableError(
                f"{where} does not exist on cluster {config.ref}: in remote mode, as in pull mode, "
                f"valuesFrom objects are read on the downstream cluster, in namespace "
                f"{config.agent_namespace}"
            )
        try:
            copy = values_copy(
                source, ref.kind.value, name=names[(ref.kind.value, ref.name)],
                namespace=config.flux_namespace, labels=labels,
                annotations={ANNOTATION_CLUSTER: config.ref},
            )  # fmt: skip
        except CopyTooLargeError as err:
            raise ValuesUnavailableError(f"{where} on cluster {config.ref} {err}") from None
        copies.append(copy)
    return copies


def keeps_release(release: Mapping[str, Any]) -> bool:
    annotations = release.get("metadata", {}).get("annotations") or {}
    return annotations.get(ANNOTATION_KEEP_RESOURCES) == "true"
