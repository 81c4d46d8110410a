"""The kind of content a Bundle deploys (a Helm chart, or Kustomize manifests), read off its spec,
its targets' overrides and a BundleDeployment's options, and what the manager reads the same way
for either kind (the content as wire JSON, its credentials Secret, its poll interval). Pure.

A Bundle sets exactly one of `spec.helm` and `spec.kustomize` (bundler.core.validation); a
target overrides with the field of the Bundle's kind (the other is refused there too).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from bundler.api.bundle import BundleSpec, BundleTarget
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.helm import HelmOptions
from bundler.api.kustomize import KustomizeOptions
from bundler.core.merge import deep_merge, merge_helm
from bundler.core.versions import is_exact_version, version_to_tag
from bundler.errors import InvalidInputError


class ContentKind(StrEnum):
    """The field of a Bundle's spec (and of its options) that holds its content."""

    HELM = "helm"
    KUSTOMIZE = "kustomize"


def content_kind(spec: BundleSpec) -> ContentKind:
    """Kustomize when spec.kustomize is set, else Helm (validation refuses both or neither)."""
    return ContentKind.KUSTOMIZE if spec.kustomize is not None else ContentKind.HELM


def content_options(spec: BundleSpec) -> HelmOptions | KustomizeOptions | None:
    """The Bundle's own content options (None: neither field set, refused by validation)."""
    return spec.kustomize if spec.kustomize is not None else spec.helm


def bundle_content(spec: BundleSpec) -> dict[str, Any]:
    """The Bundle's own content as wire JSON ({} when none is set)."""
    options = content_options(spec)
    return options.to_wire() if options is not None else {}


def target_content(target: BundleTarget, kind: ContentKind) -> dict[str, Any] | None:
    """A target's overrides of the content of `kind`, as wire JSON (None: it has none)."""
    options = target.kustomize if kind is ContentKind.KUSTOMIZE else target.helm
    return options.to_wire() if options is not None else None


def merge_content(
    kind: ContentKind, base: Mapping[str, Any], override: Mapping[str, Any]
) -> dict[str, Any]:
    """A target's overrides laid over `base`: as bundler.core.merge says for Helm; for
    Kustomize a deep merge in which a source of another kind (git over oci) replaces the
    source."""
    if kind is ContentKind.HELM:
        return merge_helm(base, override)
    merged = deep_merge(base, override)
    source, replacing = base.get("source"), override.get("source")
    if (
        isinstance(source, Mapping)
        and isinstance(replacing, Mapping)
        and set(replacing)
        and not set(replacing) & set(source)
    ):
        merged["source"] = deep_merge({}, replacing)
    return merged


def with_artifact_tag(kustomize: Mapping[str, Any], version: str) -> dict[str, Any]:
    """Merged `kustomize` (wire JSON) deploying `version` of its OCI artifact: the exact version
    (as resolved, or as written) becomes its tag; a range left unresolved (offline) stays as
    written, without a tag. Git sources are left as they are."""
    out = dict(kustomize)
    source = out.get("source") or {}
    oci = source.get("oci")
    if oci is None or oci.get("tag") is not None or not is_exact_version(version):
        return out
    pinned = {k: v for k, v in oci.items() if k != "version"}
    out["source"] = {**source, "oci": {**pinned, "tag": version_to_tag(version)}}
    return out


def poll_interval(spec: BundleSpec) -> str | None:
    """How often the manager resolves the Bundle's version again (helm or kustomize's
    pollInterval)."""
    options = content_options(spec)
    return options.pollInterval if options is not None else None


def helm_options(options: DeploymentOptions, *, obj: str | None = None) -> HelmOptions:
    """The options' chart, for what only Helm content has (a HelmRelease, a chart render);
    InvalidInputError naming `obj` when they deploy Kustomize manifests."""
    if options.helm is None:
        raise InvalidInputError(
            "deploys Kustomize manifests (options.kustomize), not a Helm chart",
            obj=obj,
            field="spec.options.helm",
        )
    return options.helm


def credentials_secret(options: DeploymentOptions) -> str | None:
    """The name of the Secret the content's source reads registry or repository credentials from
    (None: no credentials)."""
    if options.helm is not None:
        return options.helm.secretRef.name if options.helm.secretRef is not None else None
    source = options.kustomize.source if options.kustomize is not None else None
    found = (source.oci or source.git) if source is not None else None
    return found.secretRef.name if found is not None and found.secretRef is not None else None


def credentials_field(spec: BundleSpec) -> str:
    """Where the Bundle names its credentials Secret, for messages about that Secret."""
    source = spec.kustomize.source if spec.kustomize is not None else None
    if source is None:
        return "spec.helm.secretRef"
    return f"spec.kustomize.source.{'git' if source.git is not None else 'oci'}.secretRef"


def version_field(spec: BundleSpec) -> str:
    """Where the Bundle names the version it deploys, for messages about resolving it."""
    return (
        "spec.kustomize.source.oci.version" if spec.kustomize is not None else "spec.helm.version"
    )


def content_version(options: DeploymentOptions) -> str | None:
    """What the options deploy, as a version column shows it: the chart version, or the
    artifact's tag, or the Git reference."""
    if options.helm is not None:
        return options.helm.version
    return source_revision(options.kustomize) if options.kustomize is not None else None


def source_url(kustomize: KustomizeOptions) -> str | None:
    """The URL of the manifests' source (an OCI repository or a Git repository)."""
    source = kustomize.source
    found = (source.oci or source.git) if source is not None else None
    return found.url if found is not None else None


def source_revision(kustomize: KustomizeOptions) -> str | None:
    """The artifact's tag (or version), or the Git reference, as written."""
    source = kustomize.source
    if source is not None and source.oci is not None:
        return source.oci.tag or source.oci.version
    ref = source.git.ref if source is not None and source.git is not None else None
    if ref is None:
        return None
    return ref.commit or ref.tag or ref.semver or ref.branch
