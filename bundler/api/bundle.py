"""The Bundle: a chart, default values, targets and a rollout strategy, in a workspace."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.dependencies import DependsOn
from bundler.api.health import HEALTH_CHECKS_MAX, HealthCheck
from bundler.api.helm import HelmOptions
from bundler.api.images import BundleImage, ResolvedImage, TargetImage
from bundler.api.kustomize import KustomizeOptions
from bundler.api.meta import Conditions, Duration, IntOrPercent, Message, ObjectMeta
from bundler.api.schedule import Schedule, ScheduleStatus
from bundler.api.selector import LabelSelector
from bundler.api.summary import NON_READY_MAX, DisplayState, NonReadyResource, Summary


class TargetMode(StrEnum):
    FIRST_MATCH = "FirstMatch"
    ALL_MATCHES = "AllMatches"


class BundleTarget(ApiModel):
    """Clusters of the workspace picked by every criterion present (AND), and the overrides they
    get; a target with no criterion matches nothing."""

    name: str | None = None
    """Name of the target, unique within the Bundle; shown by `bundler explain` and in status
    (resolvedImages[].target)."""
    clusterName: str | None = None
    """Matches the Cluster of this name."""
    clusterSelector: LabelSelector | None = None
    """Matches the Clusters whose labels it selects; {} matches every Cluster."""
    clusterGroup: str | None = None
    """Matches the members of the ClusterGroup of this name. A group that does not exist matches
    nothing (the Bundle's References condition says so)."""
    clusterGroupSelector: LabelSelector | None = None
    """Matches the members of the ClusterGroups whose labels it selects; with clusterGroup, one
    single group must satisfy both."""
    namespace: str | None = None
    """Release namespace for the clusters this target decides, instead of spec.namespace."""
    doNotDeploy: bool = False
    """true: the Bundle is kept off the clusters this target decides (with AllMatches: off every
    cluster it matches). Default false."""
    helm: HelmOptions | None = None
    """Overrides of spec.helm for the clusters this target decides: the same fields, all
    optional. Maps merge key by key (values deep-merge), lists and scalars replace, except
    valuesFrom, whose entries are appended."""
    kustomize: KustomizeOptions | None = None
    """Overrides of spec.kustomize for the clusters this target decides: the same fields, all
    optional. Maps merge key by key, lists and scalars replace; a source of the other kind (git
    for oci) replaces the Bundle's source."""
    images: list[TargetImage] = Field(default_factory=list)
    """Overrides of how spec.images entries are chosen for the clusters this target decides (by
    name; the repository and credentials stay the Bundle's)."""
    healthChecks: list[HealthCheck] = Field(default_factory=list, max_length=HEALTH_CHECKS_MAX)
    """Objects of the release the agent checks once Flux reports it Ready, on the clusters this
    target decides (with AllMatches: of every matching target, in order): the deployment is
    Ready only when each is healthy, and a failed one is a failure of the rollout
    (onFailure). The agent needs read access to their kinds (see the agent chart's RBAC)."""


class Partition(ApiModel):
    """A manual rollout partition: the clusters its criteria pick (AND-ed as in targets; no
    criterion picks nothing), with its own budget."""

    name: str = Field(min_length=1)
    """Name of the partition, as rollout messages show it."""
    maxUnavailable: IntOrPercent | None = None
    """Most clusters of this partition that may be unavailable while new deployments are
    promoted into it: a count or a percentage of the partition ("10%"). Default: the strategy's
    maxUnavailable."""
    clusterName: str | None = None
    """Picks the Cluster of this name."""
    clusterSelector: LabelSelector | None = None
    """Picks the Clusters whose labels it selects; {} picks every Cluster."""
    clusterGroup: str | None = None
    """Picks the members of the ClusterGroup of this name."""
    clusterGroupSelector: LabelSelector | None = None
    """Picks the members of the ClusterGroups whose labels it selects; with clusterGroup, one
    single group must satisfy both."""


class OfflineClusters(StrEnum):
    """How a rollout treats clusters whose agent is Offline (no recent check-in)."""

    # Not counted unavailable, never hold a partition back, still promoted (bundler's default).
    IGNORE = "Ignore"
    # Counted unavailable like any other cluster, as Fleet does.
    BLOCK = "Block"


class DeletionGuard(ApiModel):
    """Holds a change that would delete many of a Bundle's BundleDeployments in one step (a
    selector typo, a label removed, a ClusterGroup deleted): nothing is deleted, and the Bundle
    says Ready=False, DeletionHeld, until the change is reverted or the Bundle is annotated
    bundler.dev/allow-deletion: "<its metadata.generation>". Deleting the Bundle or a Cluster is
    not guarded."""

    enabled: bool | None = None
    """false turns the guard off. Default true."""
    maxDeletions: int | None = Field(default=None, ge=0)
    """A change is held when it deletes more than this many of the Bundle's BundleDeployments
    and also more than maxDeletionsPercent of them. Default 5."""
    maxDeletionsPercent: int | None = Field(default=None, ge=0, le=100)
    """A change is held when it deletes more than this percentage (0 to 100) of the Bundle's
    BundleDeployments and also more than maxDeletions. Default 50."""


class FailureAction(StrEnum):
    """What a rollout does once more clusters failed than `onFailure.maxFailures` allows."""

    # Promote nothing more; the clusters that failed keep the failing deployment.
    HALT = "Halt"
    # Halt, and return the clusters that failed to the last options that were Ready there.
    ROLLBACK = "Rollback"


class OnFailure(ApiModel):
    """When a rollout counts as failing, and what it then does. A promoted cluster failed when
    its BundleDeployment is ErrApplied on the new deploymentID, or not Ready on it
    progressDeadline after the manager promoted it. Failures count per rollout: a new
    generation of the Bundle starts afresh, and the annotation bundler.dev/resume-rollout:
    "<generation>" lifts a halt for that generation."""

    # Decided by bundler.core.rollout_failures.
    maxFailures: IntOrPercent | None = None
    """Failed clusters tolerated: a count, or a percentage of the targeted clusters. Default 0:
    the first failure halts the rollout."""
    progressDeadline: Duration | None = None
    """How long a promoted cluster may take to be Ready on its new deployment (a Go duration:
    10m), measured on the manager's clock from the BundleDeployment's spec.promotedAt. An
    Offline cluster is not failed by it unless offlineClusters is Block. Default: no deadline,
    only ErrApplied fails."""
    action: FailureAction | None = None
    """Halt (default): nothing more is promoted or created, the failed clusters keep what they
    run, and the Bundle says Ready=False, RolloutHalted. Rollback: as Halt, and each failed
    cluster returns to the last options that were Ready there (Ready=False, RolledBack)."""


class Approval(ApiModel):
    """Partitions the rollout waits before until someone approves them for the Bundle's current
    generation (`bundler rollout approve BUNDLE [--partition P]`, which writes the annotation
    bundler.dev/approve-rollout), so an approval never carries over to a later spec."""

    partitions: list[str] | None = Field(default=None, min_length=1)
    """Names of manual partitions (rolloutStrategy.partitions) that wait for approval. Unset:
    every partition, automatic ones included."""


class RolloutStrategy(ApiModel):
    """How a change reaches the targeted clusters: Fleet's model (new options are staged, then
    promoted partition by partition within maxUnavailable) plus bundler's rules for offline
    clusters, mass deletion and failing rollouts. Percentages round down, with a minimum of 1."""

    maxUnavailable: IntOrPercent | None = None
    """Most targeted clusters that may be unavailable (their current deployment not applied or
    not Ready) while new deployments are promoted: a count, or a percentage of the targets ("10%").
    Default 100%. Also each partition's budget, unless the partition sets its own."""
    maxUnavailablePartitions: IntOrPercent | None = None
    """Once more partitions than this are unavailable (more unavailable clusters than their
    maxUnavailable), later partitions wait: a count, or a percentage of the partitions.
    Default 0."""
    autoPartitionSize: IntOrPercent | None = None
    """Size of each automatic partition: a count, or a percentage of the targets. Default
    25%."""
    autoPartitionThreshold: int | None = Field(default=None, ge=0)
    """Clusters are split into automatic partitions only once at least this many are targeted;
    fewer form one partition. Default 200."""
    maxNew: int | None = Field(default=None, ge=1)
    """Most BundleDeployments the manager creates in one pass (at least 1). Default 50."""
    partitions: list[Partition] = Field(default_factory=list)
    """Manual partitions, rolled out in order: each cluster joins the first that picks it, and
    the clusters none picks are partitioned automatically after them (Fleet leaves them out)."""
    offlineClusters: OfflineClusters | None = None
    """Ignore (default): a cluster whose agent has not checked in within the manager's
    --offline-after is not counted unavailable, never holds its partition back, and still gets
    its new deployment promoted (counted in status.summary.offline). Block: it counts
    unavailable, as in Fleet."""
    deletionGuard: DeletionGuard | None = None
    """Holds a change that would delete many BundleDeployments at once (on by default)."""
    onFailure: OnFailure | None = None
    """Halts (or rolls back) a rollout once too many clusters fail it. Unset: a failing rollout
    is only held back by maxUnavailable, as in Fleet."""
    bakeTime: Duration | None = None
    """How long a partition must stay Ready on its new deployments (a Go duration: 10m) before
    the next partition starts; partitions then roll out one after the other. A cluster that
    stops being Ready during its partition's bake is a failure of the rollout (onFailure).
    Measured on the manager's clock from when it first saw the whole partition Ready
    (status.rollout.partitions[].readySince). Default: no bake."""
    approval: Approval | None = None
    """Partitions that wait for an approval of the Bundle's current generation before their
    clusters get anything new (Ready=False, WaitingForApproval). Unset: none waits."""


class BundleSpec(ApiModel):
    """The content (a Helm chart or Kustomize manifests), its targets and its rollout
    strategy."""

    helm: HelmOptions | None = None
    """The chart, its values and how Helm installs it on every targeted cluster; targets may
    override any field. Exactly one of helm and kustomize is set."""
    kustomize: KustomizeOptions | None = None
    """Manifests or a Kustomize overlay from an OCI artifact or a Git repository, applied by
    Flux's kustomize-controller on every targeted cluster; targets may override any field.
    Exactly one of helm and kustomize is set."""
    namespace: str | None = None
    """Namespace of the release on each downstream cluster (created when missing); a target's
    namespace overrides it. Default: default. With kustomize: where the namespaced objects
    go unless kustomize.targetNamespace says otherwise."""
    targetMode: TargetMode = TargetMode.FIRST_MATCH
    """FirstMatch (default): the first matching target decides for a cluster. AllMatches: every
    matching target's overrides apply, in order."""
    targets: list[BundleTarget] = Field(default_factory=list)
    """Which Clusters of the Bundle's workspace get it, and their overrides; tried in order. A
    cluster no target matches gets nothing (no targets: nothing is deployed, Ready=False
    NoTargets)."""
    rolloutStrategy: RolloutStrategy | None = None
    """How a change reaches the targeted clusters. Default: Fleet's defaults and bundler's rules
    (offline clusters ignored, mass deletion held)."""
    dependsOn: list[DependsOn] = Field(default_factory=list)
    """Bundles of the same workspace (by name or label selector) that must be Ready, or in one
    of their acceptedStates, on a cluster before this Bundle's new options are applied there."""
    paused: bool = False
    """true: changes are staged on the BundleDeployments (spec.stagedOptions) but never
    promoted, and no BundleDeployment is created. Default false."""
    keepResources: bool = False
    """true: when a BundleDeployment is deleted (the Bundle deleted, a cluster no longer
    targeted) its release stays installed. Default false: Flux uninstalls it."""
    images: list[BundleImage] = Field(default_factory=list)
    """Container images whose tags the manager chooses centrally (like a version range) and
    templates read as images.NAME; a new tag redeploys exactly the clusters whose values read
    it."""
    schedule: Schedule | None = None
    """Maintenance windows of this Bundle: on each targeted cluster, new deployments are
    promoted and created only inside them (and inside the Cluster's own spec.schedule), and a
    deleted Bundle's releases are removed only then. Unset: at any time."""


class BundleDisplay(ApiModel):
    """Short texts for `kubectl get bundles`."""

    readyClusters: str = ""
    """Ready clusters of the targeted ones, e.g. 2/3 (the READY column)."""
    state: DisplayState | None = None
    """The STATE column: the reason of the Ready condition. The worst state among the targeted
    clusters (ErrApplied, WaitApplied, Offline, NotReady, Pending, OutOfSync, Modified, Ready),
    Paused (spec.paused), or what holds the whole Bundle back: NoTargets, InvalidSpec,
    VersionNotResolved, CredentialsNotFound, CredentialsRefused, CredentialsCopyBlocked,
    ValuesNotFound, ValuesRefused, ValuesCopyBlocked, DeletionHeld, RolloutHalted,
    RolledBack, or the gate every held cluster waits at: WaitingForApproval, Baking,
    OutsideWindow."""
    version: str | None = None
    """The chart version the Bundle deploys (the VERSION column): spec.helm.version when it is
    exact, else what it resolved to."""
    gate: str | None = None
    """The GATE column: what the rollout waits at, and where: WaitingForApproval(prod),
    Baking(canary), OutsideWindow(3 clusters). Unset when nothing waits at a gate."""


class PartitionState(StrEnum):
    """Where one partition of a rollout stands."""

    # Its clusters run their new deployments Ready, and its bake (if any) is over.
    READY = "Ready"
    # Ready, for less than bakeTime: the next partition waits.
    BAKING = "Baking"
    # New deployments are being promoted, or are not Ready yet.
    ROLLING_OUT = "RollingOut"
    # Waits for an earlier partition (its bake, its readiness, maxUnavailablePartitions).
    WAITING = "Waiting"
    # Waits for an approval of the current generation (rolloutStrategy.approval).
    WAITING_FOR_APPROVAL = "WaitingForApproval"
    # Its clusters with something new are outside their maintenance windows.
    OUTSIDE_WINDOW = "OutsideWindow"
    # The rollout is halted (onFailure), or the Bundle or its clusters paused.
    HELD = "Held"


class PartitionStatus(ApiModel):
    """One partition of the rollout, in rollout order."""

    name: str
    """The partition's name (a manual partition's, or all, all-N, unmatched, unmatched-N)."""
    clusters: int = 0
    """How many targeted clusters it holds."""
    state: PartitionState
    """Ready, Baking, RollingOut, Waiting, WaitingForApproval, OutsideWindow or Held."""
    readySince: str | None = None
    """When the manager first saw every cluster of the partition Ready on its current
    deployments (RFC 3339): the bake runs from here."""
    baked: bool = False
    """true once the partition stayed Ready for bakeTime on these deployments."""
    deployments: str | None = None
    """A digest of the partition's clusters and their wanted deploymentIDs: readySince and
    baked hold for these deployments only."""
    message: Message = ""
    """What it waits for, or how far it is."""


class RolloutStatus(ApiModel):
    """The rollout's partitions and their gates; present with bakeTime, approval or a
    schedule."""

    partitions: list[PartitionStatus] = Field(default_factory=list)
    """Every partition, in rollout order."""


class BundleStatus(ApiModel):
    """Written by the manager: the resolved version and images, and the roll-up of the
    BundleDeployments over the targeted clusters."""

    observedGeneration: int | None = None
    """The metadata.generation this status was computed for."""
    resolvedVersion: str | None = None
    """The concrete chart version spec.helm.version resolved to (set when it is a range or
    unset); a target that overrides the version may resolve to another."""
    resolvedImages: list[ResolvedImage] = Field(default_factory=list)
    """What each spec.images entry resolved to: one entry per distinct selection (the Bundle's
    own, and each target override in use)."""
    summary: Summary | None = None
    """How many targeted clusters are in each state."""
    display: BundleDisplay | None = None
    """Short texts for kubectl get."""
    nonReady: list[NonReadyResource] = Field(default_factory=list, max_length=NON_READY_MAX)
    """Up to 10 targeted clusters that are not Ready, worst state first, each with the reason."""
    rollout: RolloutStatus | None = None
    """Where each partition of the rollout stands (with bakeTime, approval or a schedule)."""
    schedule: ScheduleStatus | None = None
    """Whether the Bundle's own spec.schedule allows changes now, and its current or next
    window."""
    conditions: Conditions = Field(default_factory=list)
    """Ready (False with the worst state as reason, or NoTargets, InvalidSpec,
    VersionNotResolved, CredentialsNotFound, CredentialsRefused, CredentialsCopyBlocked,
    ValuesNotFound, ValuesRefused, ValuesCopyBlocked, DeletionHeld, RolloutHalted,
    RolledBack, WaitingForApproval, Baking, OutsideWindow, Paused; reason Paused also while
    True for a paused Bundle whose clusters are all Ready); References (present only while
    False, ReferenceNotFound: a clusterGroup or dependsOn names nothing in the workspace);
    ImagesResolved (only with spec.images); RolloutGated (present only while True: the rollout
    waits at a gate, reason WaitingForApproval, Baking or OutsideWindow, the message naming the
    partition). At most 32."""


class Bundle(ApiModel):
    """A Helm chart with default values (or Kustomize manifests), the clusters it targets and
    how a change rolls out to them, in a workspace (a namespace of the management cluster). The
    manager writes one BundleDeployment per targeted Cluster of the same workspace; that
    cluster's agent turns it into a Flux HelmRelease (or Kustomization)."""

    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    """The versioned schema of this object: bundler.dev/v1alpha1."""
    kind: Literal["Bundle"] = "Bundle"
    """The kind of this object: Bundle."""
    metadata: ObjectMeta
    spec: BundleSpec
    """What to deploy, where, and how the rollout proceeds."""
    status: BundleStatus | None = None
    """Written by the manager: what was resolved, and how the deployment goes on each targeted
    cluster."""
