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


class BundleDeploymentSpec(ApiModel):
    options: DeploymentOptions
    deploymentID: str
    stagedOptions: DeploymentOptions | None = None
    stagedDeploymentID: str | None = None
    paused: bool = False


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
