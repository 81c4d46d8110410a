"""Flux's Helm post-renderers (a HelmRelease's spec.postRenderers): Kustomize patches and image
overrides applied to what Helm renders, before Flux applies it. Passed through under Flux's names;
bundler templates the patches per cluster (bundler.core.templating.fields)."""

from __future__ import annotations

from pydantic import Field

from bundler.api.base import ApiModel


class ResourceSelector(ApiModel):
    """The objects of the release a patch applies to: every field given must match."""

    group: str | None = None
    """API group, e.g. apps ("" is the core group)."""
    version: str | None = None
    """API version, e.g. v1."""
    kind: str | None = None
    """Kind, e.g. Deployment."""
    name: str | None = None
    """Name of the object (a regular expression, as Kustomize reads it)."""
    namespace: str | None = None
    """Namespace of the object (a regular expression, as Kustomize reads it)."""
    labelSelector: str | None = None
    """A label selector in Kubernetes' text form, e.g. app=web,tier!=cache."""
    annotationSelector: str | None = None
    """An annotation selector, written like a label selector."""


class KustomizePatch(ApiModel):
    """One patch: a strategic merge patch (a partial object) or a JSON 6902 patch (a list of
    operations), written as YAML text."""

    patch: str = Field(min_length=1)
    """The patch as YAML text. bundler templates it per cluster: the text is read as YAML, each
    string in it is rendered like a string of values (`${ ... }`, `$${` for a literal `${`), and
    the result is written back as YAML, so a template yields data, never YAML structure."""
    target: ResourceSelector | None = None
    """The objects to patch; unset: those the strategic merge patch names itself."""


class KustomizeImage(ApiModel):
    """An image override: every container image named `name` gets a new name, tag or digest."""

    name: str = Field(min_length=1)
    """Image name without tag, as the chart writes it, e.g. ghcr.io/stefanprodan/podinfo."""
    newName: str | None = None
    """Replacement image name."""
    newTag: str | None = None
    """Replacement tag."""
    digest: str | None = None
    """Replacement digest (sha256:...); wins over newTag."""


class Kustomize(ApiModel):
    """Kustomize operations on the rendered manifests."""

    patches: list[KustomizePatch] | None = None
    """Patches applied in order."""
    images: list[KustomizeImage] | None = None
    """Image overrides."""


class PostRenderer(ApiModel):
    """One post-renderer of the release."""

    kustomize: Kustomize | None = None
    """Kustomize patches and image overrides."""
