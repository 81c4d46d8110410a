"""KUSTOMIZE, the second delivery: manifests or a Kustomize overlay through a Flux source and a
Kustomization (kustomize.toolkit.fluxcd.io/v1). Pure.

The source is an OCIRepository (source.toolkit.fluxcd.io/v1) pinned to the artifact's tag for
`options.kustomize.source.oci`, or a GitRepository (v1) following its ref for `source.git`; both
are named like the Kustomization, `release_object_name(<bundle name>)`, and read the credentials
copy the agent writes beside them. The Kustomization takes Flux's fields from the options as they
are (path, prune, wait, timeout, postBuild.substitute, patches, components, rendered by the
manager), `targetNamespace` defaulting to the options' namespace, and in remote mode
`spec.kubeConfig.secretRef` to the cluster's kubeconfig Secret, as a HelmRelease does.

Read back: Ready as Flux's Ready condition says for the Kustomization's current generation
(bundler.core.delivery.readiness), `status.lastAppliedRevision` as the release's applied revision,
and the objects Flux's health check names while it is not Ready. `current` holds a Ready report
back until the revision Flux applied is the artifact tag (or Git branch or tag) the options name:
a new tag changes only the OCIRepository, so the Kustomization's Ready=True still describes the
previous revision until it applies the new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions, ReleaseStatus
from bundler.api.kustomize import KustomizeOptions
from bundler.api.resources import GIT_REPOSITORY, KUSTOMIZATION, OCI_REPOSITORY, Resource
from bundler.core.content import credentials_secret
from bundler.core.delivery import Delivery, Obj, ReleaseReport, ReportReason
from bundler.core.delivery.helm import release_objects
from bundler.core.delivery.readiness import flux_readiness
from bundler.core.flux import (
    KUBECONFIG_SECRET_KEY,
    FluxTarget,
    bundle_name,
    flux_labels,
    release_object_name,
    remote_kubeconfig,
)
from bundler.core.labels import ANNOTATION_CLUSTER, ANNOTATION_DEPLOYMENT_ID
from bundler.errors import InvalidInputError

DEFAULT_INTERVAL = "10m"
_FIELD = "spec.options.kustomize"
# Kustomization fields taken from the options as they are: their names are Flux's.
_PASSED = ("wait", "timeout", "postBuild", "patches", "components")
_SOURCES = (OCI_REPOSITORY, GIT_REPOSITORY)


def build(bd: BundleDeployment, target: FluxTarget) -> list[tuple[Resource, Obj]]:
    """The source and the Kustomization for `bd`, in apply order; InvalidInputError names the
    field that cannot become one."""
    obj = f"BundleDeployment {bd.metadata.namespace}/{bd.metadata.name}"
    kustomize = _kustomize(bd.spec.options, obj)
    name = release_object_name(bundle_name(bd))
    interval = kustomize.interval or DEFAULT_INTERVAL
    source_res, source_spec = _source(kustomize, obj, interval, target.registry_secret)
    source = _object(source_res, name, bd, target)
    source["spec"] = source_spec
    wire = kustomize.to_wire()
    spec: dict[str, Any] = {
        "interval": interval,
        "sourceRef": {"kind": source_res.kind, "name": name},
        "path": kustomize.path or "./",
        "prune": True if kustomize.prune is None else kustomize.prune,
        "targetNamespace": kustomize.targetNamespace or bd.spec.options.namespace,
        **{field: wire[field] for field in _PASSED if field in wire},
    }
    kubeconfig = remote_kubeconfig(target, obj)
    if kubeconfig is not None:
        spec["kubeConfig"] = {"secretRef": {"name": kubeconfig, "key": KUBECONFIG_SECRET_KEY}}
    workload = _object(KUSTOMIZATION, name, bd, target)
    workload["metadata"]["annotations"][ANNOTATION_DEPLOYMENT_ID] = bd.spec.deploymentID
    workload["spec"] = spec
    return [(source_res, source), (KUSTOMIZATION, workload)]


def _kustomize(options: DeploymentOptions, obj: str) -> KustomizeOptions:
    if options.kustomize is None:
        raise InvalidInputError(
            "deploys a Helm chart (options.helm), not Kustomize manifests", obj=obj, field=_FIELD
        )
    return options.kustomize


def _source(
    kustomize: KustomizeOptions, obj: str, interval: str, secret: str | None
) -> tuple[Resource, dict[str, Any]]:
    source = kustomize.source
    if source is not None and source.oci is not None and source.oci.url:
        if not source.oci.tag:
            raise InvalidInputError(
                f"{source.oci.version or 'no version'!r} is not a tag; the manager resolves "
                "versions to tags before deploying",
                obj=obj,
                field=f"{_FIELD}.source.oci.tag",
            )
        spec: dict[str, Any] = {
            "interval": interval,
            "url": source.oci.url,
            "ref": {"tag": source.oci.tag},
        }
        if source.oci.insecure:
            spec["insecure"] = True
        resource = OCI_REPOSITORY
    elif source is not None and source.git is not None and source.git.url:
        spec = {"interval": interval, "url": source.git.url}
        if source.git.ref is not None:
            spec["ref"] = source.git.ref.to_wire()
        resource = GIT_REPOSITORY
    else:
        raise InvalidInputError(
            "is required: an OCI artifact (oci.url) or a Git repository (git.url)",
            obj=obj,
            field=f"{_FIELD}.source",
        )
    if secret is not None:
        spec["secretRef"] = {"name": secret}
    return resource, spec


def _object(res: Resource, name: str, bd: BundleDeployment, target: FluxTarget) -> Obj:
    metadata = {
        "name": name,
        "namespace": target.namespace,
        "labels": flux_labels(bd),
        "annotations": {ANNOTATION_CLUSTER: target.cluster},
    }
    return {"apiVersion": res.api_version, "kind": res.kind, "metadata": metadata}


def workload_name(bd: BundleDeployment) -> str:
    return release_object_name(bundle_name(bd))


def read_kustomization(kustomization: Mapping[str, Any] | None) -> ReleaseReport:
    """Readiness, reason, message and applied revision of a live Kustomization (None:
    absent)."""
    if kustomization is None:
        return ReleaseReport(
            False, ReportReason.NOT_DEPLOYED, "no Kustomization has been written yet"
        )
    meta = kustomization.get("metadata") or {}
    status = kustomization.get("status") or {}
    where = f"Kustomization {meta.get('namespace')}/{meta.get('name')}"
    applied = status.get("lastAppliedRevision")
    details = (
        ReleaseStatus(
            name=meta.get("name"), namespace=meta.get("namespace"), appliedRevision=applied
        )
        if isinstance(applied, str) and applied
        else None
    )
    report = flux_readiness(kustomization, where, details)
    return report if report.ready else replace(report, objects=release_objects(status))


def current(report: ReleaseReport, options: DeploymentOptions) -> ReleaseReport:
    """`report`, or Progressing while the revision Flux applied is not the one the options name
    (an artifact's tag, a Git branch or tag; a Git semver range or commit is Flux's to pick)."""
    wanted = _wanted_revision(options.kustomize)
    if not report.ready or wanted is None:
        return report
    applied = report.release.appliedRevision if report.release is not None else None
    if applied is not None and applied.startswith(f"{wanted}@"):
        return report
    last = f"last applied {applied}" if applied else "nothing applied yet"
    message = f"waiting for Flux to apply revision {wanted} ({last})"
    return ReleaseReport(False, ReportReason.PROGRESSING, message, report.release, report.drift)


def _wanted_revision(kustomize: KustomizeOptions | None) -> str | None:
    source = kustomize.source if kustomize is not None else None
    if source is None:
        return None
    if source.oci is not None:
        return source.oci.tag
    ref = source.git.ref if source.git is not None else None
    if ref is None or ref.commit or ref.semver:
        return None
    return ref.tag or ref.branch


KUSTOMIZE = Delivery(
    name="kustomize",
    sources=_SOURCES,
    workload=KUSTOMIZATION,
    serves=lambda options: options.kustomize is not None,
    build=build,
    workload_name=workload_name,
    read=read_kustomization,
    current=current,
    secret_ref=credentials_secret,
    install_hint=(
        "install Flux's kustomize-controller and source-controller "
        "(e.g. `flux install --components=source-controller,kustomize-controller`)"
    ),
)
