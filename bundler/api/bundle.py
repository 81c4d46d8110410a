"""The Bundle: a chart, default values, targets and a rollout strategy, in a workspace."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.helm import HelmOptions
from bundler.api.images import BundleImage, ResolvedImage, TargetImage
from bundler.api.meta import Conditions, DependsOn, Duration, IntOrPercent, ObjectMeta
from bundler.api.selector import LabelSelector
from bundler.api.summary import NON_READY_MAX, DeploymentState, NonReadyResource, Summary


class TargetMode(StrEnum):
    FIRST_MATCH = "FirstMatch"
    ALL_MATCHES = "AllMatches"


class BundleTarget(ApiModel):
    """Clusters picked by every criterion present (AND); no criterion at all matches nothing."""

    name: str | None = None
    clusterName: str | None = None
    clusterSelector: LabelSelector | None = None
    clusterGroup: str | None = None
    clusterGroupSelector: LabelSelector | None = None
    namespace: str | None = None
    doNotDeploy: bool = False
    helm: HelmOptions | None = None
    images: list[TargetImage] = Field(default_factory=list)


class Partition(ApiModel):
    """A manual rollout partition: the clusters its criteria pick, with its own budget."""

    name: str = Field(min_length=1)
    maxUnavailable: IntOrPercent | None = None
    clusterName: str | None = None
    clusterSelector: LabelSelector | None = None
    clusterGroup: str | None = None
    clusterGroupSelector: LabelSelector | None = None


class OfflineClusters(StrEnum):
    """How a rollout treats clusters whose agent is Offline (no recent check-in)."""

    # Not counted unavailable, never hold a partition back, still promoted (bundler's default).
    IGNORE = "Ignore"
    # Counted unavailable like any other cluster, as Fleet does.
    BLOCK = "Block"


class DeletionGuard(ApiModel):
    """Holds a change that would delete many of a Bundle's BundleDeployments in one step.

    Held when the change deletes more than `maxDeletions` (default 5) and more than
    `maxDeletionsPercent` (default 50) percent of them; `enabled: false` turns the guard off.
    """

    enabled: bool | None = None
    maxDeletions: int | None = Field(default=None, ge=0)
    maxDeletionsPercent: int | None = Field(default=None, ge=0, le=100)


class FailureAction(StrEnum):
    """What a rollout does once more clusters failed than `onFailure.maxFailures` allows."""

    # Promote nothing more; the clusters that failed keep the failing deployment.
    HALT = "Halt"
    # Halt, and return the clusters that failed to the last options that were Ready there.
    ROLLBACK = "Rollback"


class OnFailure(ApiModel):
    """When a rollout counts as failing, and what it then does (bundler.core.rollout_failures).

    maxFailures: failed clusters tolerated (default 0: the first failure halts); a percentage is
    of the bundle's targets. progressDeadline: how long a promoted cluster may take to be Ready on
    its new deployment (default: no deadline, only ErrApplied fails). action: default Halt.
    """

    maxFailures: IntOrPercent | None = None
    progressDeadline: Duration | None = None
    action: FailureAction | None = None


class RolloutStrategy(ApiModel):
    """Fleet's rollout knobs plus bundler's safety rules; percentages round down with a minimum
    of 1."""

    maxUnavailable: IntOrPercent | None = None
    maxUnavailablePartitions: IntOrPercent | None = None
    autoPartitionSize: IntOrPercent | None = None
    autoPartitionThreshold: int | None = Field(default=None, ge=0)
    maxNew: int | None = Field(default=None, ge=1)
    partitions: list[Partition] = Field(default_factory=list)
    offlineClusters: OfflineClusters | None = None
    deletionGuard: DeletionGuard | None = None
    onFailure: OnFailure | None = None


class BundleSpec(ApiModel):
    helm: HelmOptions
    namespace: str | None = None
    targetMode: TargetMode = TargetMode.FIRST_MATCH
    targets: list[BundleTarget] = Field(default_factory=list)
    rolloutStrategy: RolloutStrategy | None = None
    dependsOn: list[DependsOn] = Field(default_factory=list)
    paused: bool = False
    keepResources: bool = False
    images: list[BundleImage] = Field(default_factory=list)


class BundleDisplay(ApiModel):
    readyClusters: str = ""
    state: DeploymentState | None = None


class BundleStatus(ApiModel):
    observedGeneration: int | None = None
    resolvedVersion: str | None = None
    resolvedImages: list[ResolvedImage] = Field(default_factory=list)
    summary: Summary | None = None
    display: BundleDisplay | None = None
    nonReady: list[NonReadyResource] = Field(default_factory=list, max_length=NON_READY_MAX)
    conditions: Conditions = Field(default_factory=list)


class Bundle(ApiModel):
    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    kind: Literal["Bundle"] = "Bundle"
    metadata: ObjectMeta
    spec: BundleSpec
    status: BundleStatus | None = None
