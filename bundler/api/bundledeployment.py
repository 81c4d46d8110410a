"""BundleDeployment: what one cluster must run for one Bundle (spec by the manager, status by the
agent).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.dependencies import DependsOn
from bundler.api.health import HEALTH_CHECKS_MAX, HealthCheck, HealthCheckResult
from bundler.api.helm import HelmOptions, ValuesKind
from bundler.api.kustomize import KustomizeOptions
from bundler.api.meta import Conditions, ObjectMeta
from bundler.api.summary import NonReadyStatuses


class DeliveredValues(ApiModel):
    """An object of the Bundle's workspace that options.helm.valuesFrom names with source:
    Management, as the manager delivered it into the cluster namespace."""

    kind: ValuesKind
    """Secret or ConfigMap: its kind in the workspace."""
    name: str
    """Its name in the Bundle's workspace."""
    digest: str
    """sha256:<hex> of the data delivered: other data, another digest, so another
    deploymentID."""
    secretName: str
    """The copy the HelmRelease reads: a Secret of this name in the cluster namespace (a
    ConfigMap's data base64-encoded), written by the agent under the same name next to the
    HelmRelease in pull mode. The name ends with the digest's first hex digits, so the options
    of a rollout's old and new deploymentIDs each read their own data."""


class DeploymentOptions(ApiModel):
    """The fully rendered per-cluster deployment, shaped like the Bundle's own fields."""

    helm: HelmOptions | None = None
    """The Bundle's spec.helm with the deciding targets' overrides merged in, the version
    resolved and the values rendered for this cluster (pollInterval and disableTemplating left
    out). Exactly one of helm and kustomize is set."""
    kustomize: KustomizeOptions | None = None
    """The Bundle's spec.kustomize with the deciding targets' overrides merged in, the artifact
    version resolved to a tag and postBuild.substitute and patches rendered for this cluster
    (pollInterval and disableTemplating left out). Exactly one of helm and kustomize is set."""
    namespace: str
    """Namespace of the release on the cluster (with kustomize: the default targetNamespace)."""
    dependsOn: list[DependsOn] = Field(default_factory=list)
    """Bundles that must be Ready (or in their acceptedStates) on this cluster before new
    options are applied, by name: the manager resolved the Bundle's selectors."""
    keepResources: bool = False
    """true: the release stays installed when this BundleDeployment is deleted."""
    managementValues: list[DeliveredValues] | None = None
    """The objects of helm.valuesFrom with source: Management, one per object, as delivered
    (an optional one that does not exist is left out, and so is its valuesFrom entry from the
    HelmRelease)."""
    healthChecks: list[HealthCheck] | None = Field(default=None, max_length=HEALTH_CHECKS_MAX)
    """Objects the agent checks once Flux reports the release Ready (the deciding targets'
    healthChecks, each with its namespace filled in): Ready only when each is healthy."""


class LastReady(ApiModel):
    """Options that were Ready on this cluster, and their deploymentID."""

    options: DeploymentOptions
    """The options that were Ready."""
    deploymentID: str
    """Their deploymentID."""


class BundleDeploymentSpec(ApiModel):
    """Written by the manager alone: what the cluster runs (options, deploymentID), what the
    rollout holds back (stagedOptions, stagedDeploymentID), and the rollout memory of a Bundle
    with rolloutStrategy.onFailure (promotedAt, lastReady, rolledBackFrom), which the agent
    ignores."""

    # The rollout memory is kept in the spec because the spec is the manager's alone, survives
    # its restarts, and has room for options that an annotation's 256 KiB would not.
    options: DeploymentOptions
    """What the cluster should run: the agent applies these."""
    deploymentID: str
    """Content hash of options (s- and the sha256 of their canonical JSON): the same options
    give the same ID, any change a new one."""
    stagedOptions: DeploymentOptions | None = None
    """The options the manager wants next, held back by the rollout strategy (state
    OutOfSync) until promoted into options."""
    stagedDeploymentID: str | None = None
    """The deploymentID of stagedOptions."""
    paused: bool = False
    """true while the Cluster is paused: the agent applies no new options (its Deployed
    condition says Paused)."""
    promotedAt: str | None = None
    """When the current deploymentID was promoted (the manager's clock, RFC 3339); the
    progressDeadline of onFailure runs from it."""
    lastReady: LastReady | None = None
    """The options last seen Ready here, recorded when a promotion replaced them: what a
    Rollback returns to."""
    rolledBackFrom: str | None = None
    """The failing deploymentID a rollback returned this cluster from."""


class ReleaseStatus(ApiModel):
    """The newest entry of the HelmRelease's history, as Flux records it (for Kustomize content:
    the revision the Kustomization last applied)."""

    name: str | None = None
    """Helm release name."""
    namespace: str | None = None
    """Namespace of the release."""
    chartVersion: str | None = None
    """Chart version released (for OCI charts Flux appends +<digest> as build metadata)."""
    revision: int | None = None
    """Helm revision number of the release."""
    appliedRevision: str | None = None
    """Kustomize content: the source revision Flux last applied (the Kustomization's
    status.lastAppliedRevision: <tag>@sha256:<digest> for an OCI artifact,
    <branch or tag>@sha1:<commit> for Git)."""


class BundleDeploymentStatus(ApiModel):
    """Written by the cluster's agent: what it applied, and how the release is doing."""

    appliedDeploymentID: str | None = None
    """The deploymentID whose options the agent last applied (wrote as Flux objects)."""
    ready: bool = False
    """true when Flux reports the HelmRelease Ready for its current generation, on the chart
    version of the options."""
    nonModified: bool = True
    """false when the release differs from what was applied (state Modified). Default true."""
    release: ReleaseStatus | None = None
    """The newest Helm release Flux recorded."""
    nonReadyStatus: NonReadyStatuses = Field(default_factory=list)
    """While the release is not Ready: up to 10 of its objects that are not ready, from the
    HelmRelease's conditions (helm-controller's wait) and history (failed test hooks), or the
    health checks that do not pass."""
    healthChecks: list[HealthCheckResult] = Field(
        default_factory=list, max_length=HEALTH_CHECKS_MAX
    )
    """What the options' health checks found when the agent last evaluated them (after Flux
    reported the release Ready)."""
    conditions: Conditions = Field(default_factory=list)
    """Deployed (the agent's last apply of spec.options; False with the cause, e.g.
    FluxNotInstalled or CredentialsNotFound) and Ready (the release; False carries Flux's
    reason, e.g. UpgradeFailed, or the agent's, e.g. DependencyNotReady, HealthCheckFailed,
    HealthCheckPending)."""


class BundleDeployment(ApiModel):
    """What one cluster must run for one Bundle, in the cluster's namespace on the management
    cluster: its spec is written by the manager, its status by the cluster's agent; never
    written by hand."""

    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    """The versioned schema of this object: bundler.dev/v1alpha1."""
    kind: Literal["BundleDeployment"] = "BundleDeployment"
    """The kind of this object: BundleDeployment."""
    metadata: ObjectMeta
    spec: BundleDeploymentSpec
    """What the cluster must run, written by the manager."""
    status: BundleDeploymentStatus | None = None
    """What the cluster runs, written by its agent."""
