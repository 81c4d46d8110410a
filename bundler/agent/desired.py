"""The downstream objects one BundleDeployment needs: its delivery's Flux objects, and Secrets.

The Flux objects come from the BundleDeployment's delivery (bundler.core.delivery: for Helm a chart
source and a HelmRelease). The agent adds its identity labels (so its caches see exactly what it
wrote), the keep-resources annotation on the workload object (so an undeploy after the
BundleDeployment is gone still knows to leave the release installed), and the Secrets Flux reads:
- pull mode: a copy of the repository credentials Secret (the manager copies it into the cluster
  namespace, the agent next to the source on its cluster), and a copy of each delivered management
  values object (`source: Management`), under the name the manager's copy has in the cluster
  namespace, which the HelmRelease names;
- remote mode: the source reads the credentials where they are, the HelmRelease reads management
  copies where they are, and the `valuesFrom` objects read on the downstream cluster are copied
  beside the HelmRelease (bundler.core.flux.values_copies).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.agent.config import AgentConfig
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.api.helm import ValuesReference, ValuesSource
from bundler.api.resources import SECRET, Resource
from bundler.core.agent.plan import ANNOTATION_KEEP_RESOURCES
from bundler.core.delivery.registry import delivery_for
from bundler.core.flux import bundle_name as bundle_of
from bundler.core.flux import flux_labels, release_object_name
from bundler.core.flux.values_copies import (
    CopyTooLargeError,
    copy_name,
    data_digest,
    secret_of,
    values_copy,
)
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.core.naming import DNS1123_SUBDOMAIN_MAX, shorten_name
from bundler.store.protocol import Obj

# Reads a valuesFrom object (kind, name) on the downstream cluster; None when it does not exist.
ValuesReader = Callable[[str, str], Obj | None]
# Reads a Secret of the cluster namespace by name; None when it does not exist.
CopyReader = Callable[[str], Obj | None]


@dataclass(frozen=True)
class Desired:
    """The objects to write, in apply order; `workload` the kind readiness is read from."""

    objects: list[tuple[Resource, Obj]]
    workload: Resource

    @property
    def release(self) -> Obj:
        """The workload object (for Helm, the HelmRelease)."""
        return next(obj for res, obj in self.objects if res == self.workload)

    def names(self) -> set[tuple[str, str]]:
        return {(res.plural, obj["metadata"]["name"]) for res, obj in self.objects}


def credentials_secret_name(bundle: str) -> str:
    return shorten_name(f"{release_object_name(bundle)}-credentials", DNS1123_SUBDOMAIN_MAX)


def registry_secret_name(bd: BundleDeployment, config: AgentConfig) -> str | None:
    """The Secret the source reads credentials from, in the Flux namespace (None: no secretRef)."""
    ref = delivery_for(bd.spec.options).secret_ref(bd.spec.options)
    if ref is None:
        return None
    if config.mode is AgentMode.REMOTE:
        return ref
    return credentials_secret_name(bundle_of(bd))


class ValuesUnavailableError(Exception):
    """A valuesFrom object cannot be copied: a downstream one not optional and missing, or too
    large; a management copy missing from the cluster namespace, or not what the options say.
    Only a change elsewhere fixes it, so it is reported and retried."""


def desired_objects(
    bd: BundleDeployment,
    config: AgentConfig,
    credentials: Obj | None,
    values: Sequence[Obj] = (),
) -> Desired:
    """Everything to write for `bd`; `credentials` is the management copy of the secretRef
    Secret (pull mode only), `values` the copies of its valuesFrom objects (values_copies,
    management_copies). InvalidInputError when the options cannot become Flux objects."""
    delivery = delivery_for(bd.spec.options)
    flux = delivery.build(bd, config.target(registry_secret_name(bd, config)))
    identity = config.owned_labels()
    objects: list[tuple[Resource, Obj]] = [(SECRET, copy) for copy in values]
    if credentials is not None:
        objects.append((SECRET, _credentials_copy(bd, config, credentials)))
    for res, obj in flux:
        obj["metadata"]["labels"].update(identity)
        if res == delivery.workload and bd.spec.options.keepResources:
            obj["metadata"]["annotations"][ANNOTATION_KEEP_RESOURCES] = "true"
        objects.append((res, obj))
    return Desired(objects, delivery.workload)


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


def values_copies(bd: BundleDeployment, config: AgentConfig, read: ValuesReader) -> list[Obj]:
    """The copies of `bd`'s downstream valuesFrom objects, read on the downstream cluster (remote
    mode).

    A missing object that is not optional, or one too large to copy, is ValuesUnavailableError.
    """
    release = release_object_name(bundle_of(bd))
    labels = {**flux_labels(bd), **config.owned_labels()}
    copies = []
    for ref in downstream_values(bd):
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
                source, ref.kind.value, name=copy_name(release, ref.kind, ref.name),
                namespace=config.flux_namespace, labels=labels,
                annotations={ANNOTATION_CLUSTER: config.ref},
            )  # fmt: skip
        except CopyTooLargeError as err:
            raise ValuesUnavailableError(f"{where} on cluster {config.ref} {err}") from None
        copies.append(copy)
    return copies


def downstream_values(bd: BundleDeployment) -> list[ValuesReference]:
    """The valuesFrom entries of `bd` naming objects on the downstream cluster."""
    helm = bd.spec.options.helm
    refs = (helm.valuesFrom if helm is not None else None) or []
    return [ref for ref in refs if ref.source is not ValuesSource.MANAGEMENT]


def management_copies(bd: BundleDeployment, config: AgentConfig, read: CopyReader) -> list[Obj]:
    """The copies of `bd`'s delivered management objects for beside the HelmRelease (pull mode),
    read from the manager's copies in the cluster namespace. A copy missing there, or whose data
    is not what its digest says, is ValuesUnavailableError."""
    labels = {**flux_labels(bd), **config.owned_labels()}
    copies = []
    for delivered in bd.spec.options.managementValues or []:
        where = f"Secret {config.cluster_namespace}/{delivered.secretName}"
        what = f"the copy of {delivered.kind.value} {config.workspace}/{delivered.name}"
        found = read(delivered.secretName)
        if found is None:
            raise ValuesUnavailableError(
                f"{where}, {what} (valuesFrom, source: Management), does not exist in the "
                "cluster namespace; the manager writes it before the BundleDeployment"
            )
        data = {str(k): str(v) for k, v in (found.get("data") or {}).items()}
        if data_digest(data) != delivered.digest:
            raise ValuesUnavailableError(
                f"{where}, {what} (valuesFrom, source: Management), does not hold the data of "
                f"digest {delivered.digest}"
            )
        annotations = {ANNOTATION_CLUSTER: config.ref}
        name = delivered.secretName
        copies.append(secret_of(data, name, config.flux_namespace, labels, annotations))
    return copies


def keeps_release(release: Mapping[str, Any]) -> bool:
    annotations = release.get("metadata", {}).get("annotations") or {}
    return annotations.get(ANNOTATION_KEEP_RESOURCES) == "true"
