"""The Flux objects of the Helm delivery for one BundleDeployment: a chart source and a HelmRelease.

`build_flux_objects` is pure and deterministic: the same BundleDeployment and target give
byte-identical JSON, made of plain JSON types only, so the agent can compare desired with live
objects and correct drift. Names and labels are bundler.core.flux's. The HelmRelease's
`valuesFrom` names the copies helm-controller reads (bundler.core.flux.values_copies): of the
management values in both modes, of the downstream objects in remote mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.core.content import helm_options
from bundler.core.dependencies import waits_in_flux
from bundler.core.flux import (
    FluxTarget,
    bundle_name,
    flux_labels,
    helm_release_name,
    release_object_name,
    remote_kubeconfig,
)
from bundler.core.flux.release import (
    DEFAULT_INTERVAL,
    HELM_RELEASE_API_VERSION,
    ReleasePlacement,
    UnsupportedOptionError,
    release_spec,
)
from bundler.core.flux.source import (
    SOURCE_API_VERSION,
    ChartSource,
    RepoError,
    SourceOptionError,
    chart_verify,
    check_source_options,
    source_for,
    source_spec,
)
from bundler.core.flux.values_copies import release_values_from
from bundler.core.labels import ANNOTATION_CLUSTER, ANNOTATION_DEPLOYMENT_ID
from bundler.core.versions import is_exact_version
from bundler.errors import InvalidInputError

_HELM_FIELD = "spec.options.helm"
# options.helm fields of the HelmRelease's chart template (charts read through a HelmChart).
CHART_FIELDS = ("valuesFiles", "ignoreMissingValuesFiles")


@dataclass(frozen=True)
class FluxObjects:
    source: dict[str, Any]
    release: dict[str, Any]

    def all(self) -> list[dict[str, Any]]:
        """The objects in apply order: the source before the release that reads it."""
        return [self.source, self.release]


def build_flux_objects(bd: BundleDeployment, target: FluxTarget) -> FluxObjects:
    """The source and HelmRelease for `bd` in `target`; InvalidInputError names the bad field."""
    obj = f"BundleDeployment {bd.metadata.namespace}/{bd.metadata.name}"
    helm = helm_options(bd.spec.options, obj=obj).to_wire()
    chart, version = _required(helm, obj, "chart"), _required(helm, obj, "version")
    if not is_exact_version(version):
        raise InvalidInputError(
            f"{version!r} is not a concrete version; the manager resolves ranges before deploying",
            obj=obj,
            field=f"{_HELM_FIELD}.version",
        )
    try:
        source = source_for(_required(helm, obj, "repo"), chart, helm)
    except RepoError as err:
        raise InvalidInputError(str(err), obj=obj, field=f"{_HELM_FIELD}.repo") from None
    try:
        check_source_options(source, helm)
    except SourceOptionError as err:
        raise InvalidInputError(str(err), obj=obj, field=f"{_HELM_FIELD}.{err.field}") from None
    name = release_object_name(bundle_name(bd))
    interval = helm.get("interval", DEFAULT_INTERVAL)
    source_obj = _object(SOURCE_API_VERSION, source.kind.value, name, bd, target)
    source_obj["spec"] = source_spec(
        source,
        version=version,
        interval=interval,
        secret=target.registry_secret,
        insecure=bool(helm.get("insecure")),
        options=helm.get("source"),
    )
    release = _object(HELM_RELEASE_API_VERSION, "HelmRelease", name, bd, target)
    release["metadata"]["annotations"][ANNOTATION_DEPLOYMENT_ID] = bd.spec.deploymentID
    chart_ref = _chart_reference(source, name, helm, version, interval, target)
    if helm.get("valuesFrom"):
        helm["valuesFrom"] = release_values_from(
            helm["valuesFrom"],
            [d.to_wire() for d in bd.spec.options.managementValues or ()],
            name,
            remote=target.mode is AgentMode.REMOTE,
        )
    try:
        release["spec"] = release_spec(helm, chart_ref, _placement(bd, target, obj))
    except UnsupportedOptionError as err:
        raise InvalidInputError(str(err), obj=obj, field=f"{_HELM_FIELD}.{err.field}") from None
    return FluxObjects(source=source_obj, release=release)


def _required(helm: dict[str, Any], obj: str, field: str) -> str:
    value = helm.get(field)
    if not value:
        raise InvalidInputError("is required", obj=obj, field=f"{_HELM_FIELD}.{field}")
    return str(value)


def _object(
    api_version: str, kind: str, name: str, bd: BundleDeployment, target: FluxTarget
) -> dict[str, Any]:
    metadata = {
        "name": name,
        "namespace": target.namespace,
        "labels": flux_labels(bd),
        "annotations": {ANNOTATION_CLUSTER: target.cluster},
    }
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


def _chart_reference(
    source: ChartSource,
    name: str,
    helm: dict[str, Any],
    version: str,
    interval: str,
    target: FluxTarget,
) -> dict[str, Any]:
    if not source.through_chart:
        # The OCIRepository pins the version's tag; the HelmRelease reads whatever it fetched.
        ref = {"kind": source.kind.value, "name": name, "namespace": target.namespace}
        return {"chartRef": ref}
    chart_spec: dict[str, Any] = {
        "chart": helm["chart"],
        "version": version,
        "sourceRef": {"kind": source.kind.value, "name": name},
        "interval": interval,
    }
    chart_spec.update({k: helm[k] for k in CHART_FIELDS if k in helm})
    verify = chart_verify(helm.get("source")) if source.oci else None
    if verify is not None:
        chart_spec["verify"] = verify
    return {"chart": {"spec": chart_spec}}


def _placement(bd: BundleDeployment, target: FluxTarget, obj: str) -> ReleasePlacement:
    options = bd.spec.options
    kubeconfig_secret = remote_kubeconfig(target, obj)
    return ReleasePlacement(
        release_name=helm_release_name(helm_options(options).releaseName or bundle_name(bd)),
        namespace=options.namespace,
        # Flux waits for a dependency Ready: only for those whose accepted states all are.
        depends_on=[
            release_object_name(dep.name)
            for dep in options.dependsOn
            if dep.name is not None and waits_in_flux(dep)
        ],
        depends_on_namespace=target.namespace,
        kubeconfig_secret=kubeconfig_secret,
    )
