"""`spec.kustomize` of a Bundle (and of each target's overrides and each BundleDeployment's
options): a directory of manifests or a Kustomize overlay, fetched from an OCI artifact or a Git
repository, that Flux's kustomize-controller builds and applies on each targeted cluster.

Field names are Flux's: those of the Kustomization (kustomize.toolkit.fluxcd.io/v1: path,
targetNamespace, prune, wait, timeout, postBuild, patches, components) and of its source
(OCIRepository and GitRepository, source.toolkit.fluxcd.io/v1: url, ref, secretRef). Every field
is optional here: a target's `kustomize` overrides only what it sets, and the merged result is
checked for a source by the core.
"""

from __future__ import annotations

from bundler.api.base import ApiModel
from bundler.api.meta import Duration, LocalObjectReference
from bundler.api.post_render import KustomizePatch


class OCIArtifactSource(ApiModel):
    """An artifact in Flux's format (`bundler artifact push`, `flux push artifact`) in an OCI
    registry, read by an OCIRepository."""

    url: str | None = None
    """The artifact's repository: oci://host/path, without a tag."""
    tag: str | None = None
    """An exact tag to deploy. Exclusive with version."""
    version: str | None = None
    """An exact version or a semver range ("1.2.*", ">=1.0.0 <2.0.0") the manager resolves
    against the repository's tags, like spec.helm.version, so every cluster gets the same tag
    and a newly pushed one rolls out. Unset with no tag: the latest stable semver tag."""
    secretRef: LocalObjectReference | None = None
    """A Secret with the registry's credentials (kubernetes.io/dockerconfigjson, or username and
    password), in the Bundle's workspace: the manager uses it to resolve versions and copies it
    into each targeted cluster namespace, and the agent gives it to the OCIRepository. Must not
    be named bundler-agent-token."""
    insecure: bool | None = None
    """Flux speaks plain HTTP to the registry (OCIRepository spec.insecure). Default false."""


class GitReference(ApiModel):
    """Which revision of the repository: one of branch, tag, semver or commit (GitRepository
    spec.ref)."""

    branch: str | None = None
    """A branch to follow, e.g. main."""
    tag: str | None = None
    """A tag to check out."""
    semver: str | None = None
    """A semver range over the repository's tags; Flux checks out the highest tag it matches."""
    commit: str | None = None
    """A commit SHA to check out."""


class GitSource(ApiModel):
    """A Git repository read by a GitRepository."""

    url: str | None = None
    """The repository's URL: https://, http:// or ssh://."""
    ref: GitReference | None = None
    """The revision to check out. Default: the branch master, as Flux."""
    secretRef: LocalObjectReference | None = None
    """A Secret with the repository's credentials (username and password, or identity and
    known_hosts for ssh), in the Bundle's workspace: copied into each targeted cluster namespace
    and given to the GitRepository. Must not be named bundler-agent-token."""


class KustomizeSource(ApiModel):
    """Where the manifests come from: exactly one of oci or git (a target that names the other
    kind replaces the Bundle's source)."""

    oci: OCIArtifactSource | None = None
    """An OCI artifact in Flux's format."""
    git: GitSource | None = None
    """A Git repository."""


class PostBuild(ApiModel):
    """What kustomize-controller does to the built manifests before applying them."""

    substitute: dict[str, str] | None = None
    """Variables substituted into the manifests where they write ${name} (Flux's postBuild
    substitution). bundler templates each value per cluster like Helm values (`${ cluster.name
    }`, `$${` for a literal `${`); a value must render to text."""


class KustomizeOptions(ApiModel):
    """The manifests, their source and how Flux's kustomize-controller applies them."""

    source: KustomizeSource | None = None
    """Where the manifests come from: an OCI artifact or a Git repository."""
    path: str | None = None
    """The directory inside the source holding a kustomization.yaml or plain manifests (the
    Kustomization's spec.path). Default: the source's root."""
    targetNamespace: str | None = None
    """Sets the namespace of every namespaced object built (spec.targetNamespace). Default:
    the Bundle's namespace (spec.namespace, a target's namespace, else default)."""
    prune: bool | None = None
    """Delete the objects that a new revision no longer contains, and all of them when the
    BundleDeployment is deleted (spec.prune). Default true."""
    wait: bool | None = None
    """Ready only once every applied object is healthy (spec.wait). Default false: Ready once
    applied."""
    timeout: Duration | None = None
    """How long applying and health checking may take (spec.timeout; Flux's default: the
    interval). A Go duration: 5m, 1h30m, 10s."""
    interval: Duration | None = None
    """How often Flux reconciles the Kustomization and checks its source. Default 10m."""
    postBuild: PostBuild | None = None
    """Variables substituted into the built manifests, templated per cluster."""
    patches: list[KustomizePatch] | None = None
    """Strategic merge or JSON 6902 patches, each with the objects it targets (spec.patches),
    templated per cluster like values. A target's list replaces the Bundle's."""
    components: list[str] | None = None
    """Paths of Kustomize components, relative to path (spec.components)."""
    pollInterval: Duration | None = None
    """How often the manager resolves source.oci.version again, so that a newly pushed artifact
    rolls out; unset: only when the Bundle changes. Read by the manager only, never copied into
    a BundleDeployment."""
    disableTemplating: bool | None = None
    """true: postBuild.substitute and patches are passed as written, no `${ }` templating.
    Default false. Read by the manager only, never copied into a BundleDeployment."""
