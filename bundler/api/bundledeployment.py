"""BundleDeployment: what one cluster must run for one Bundle (spec by the manager, status by the
agent).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.helm import HelmOptions
from bundler.api.meta import Conditions, DependsOn, ObjectMeta


class DeploymentOptions(ApiModel):
    """The fully rendered per-cluster deployment, shaped like the Bundle's own fields."""

    helm: HelmOptions
    namespace: str
    dependsOn: list[DependsOn] = Field(default_factory=list)
    keepResources: bool = False


class LastReady(ApiModel):
    """Options that were Ready on this cluster, and their deploymentID."""

    options: DeploymentOptions
    deploymentID: str


class BundleDeploymentSpec(ApiModel):
    """options/deploymentID: what runs; staged*: what the rollout holds back.

    With a Bundle's `rolloutStrategy.onFailure`, the manager also keeps its rollout memory here
    (the spec is the manager's alone, survives its restarts, and has room for options that an
    annotation's 256 KiB would not): `promotedAt`, when the current deploymentID was promoted
    (the manager's clock, RFC 3339); `lastReady`, the options last seen Ready here, recorded when
    they were replaced; `rolledBackFrom`, the failing deploymentID this cluster was returned from.
    The agent ignores these fields.
    """

    options: DeploymentOptions
    deploymentID: str
    stagedOptions: DeploymentOptions | None = None
    stagedDeploymentID: str | None = None
    paused: bool = False
    promotedAt: str | None = None
    lastReady: LastReady | None = None
    rolledBackFrom: str | None = None


class ReleaseStatus(ApiModel):
    name: str | None = None
    namespace: str | None = None
    chartVersion: str | None = None
    revision: int | None = None


class BundleDeploymentStatus(ApiModel):
    appliedDeploymentID: str | None = None
    ready: bool = False
    nonModified: bool = True
    release: ReleaseStatus | None = None
    conditions: Conditions = Field(default_factory=list)


class BundleDeployment(ApiModel):
    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    kind: Literal["BundleDeployment"] = "BundleDeployment"
    metadata: ObjectMeta
    spec: BundleDeploymentSpec
    status: BundleDeploymentStatus | None = None
