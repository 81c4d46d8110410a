"""Cluster (one downstream cluster) and ClusterGroup (a label selector over Clusters)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.meta import Conditions, FreeForm, ObjectMeta
from bundler.api.schedule import Schedule, ScheduleStatus
from bundler.api.selector import LabelSelector
from bundler.api.summary import (
    NON_READY_MAX,
    DisplayState,
    NonReadyBundle,
    ObjectKey,
    Summary,
)


class AgentMode(StrEnum):
    PULL = "pull"
    REMOTE = "remote"


class ClusterBootstrap(ApiModel):
    """This Cluster's exceptions to the workspace's BootstrapConfig `default`."""

    enabled: bool | None = None
    """true: bootstrap this Cluster; false: never. Unset: only when it is an imported Cluster API
    cluster and the BootstrapConfig's importedClusters is true."""
    fluxVersion: str | None = None
    """Version (or range) of the Flux chart for this cluster, instead of the BootstrapConfig's
    spec.flux.version."""
    agentVersion: str | None = None
    """Version (or range) of the agent chart for this cluster, instead of the BootstrapConfig's
    spec.agent.version."""
    mode: AgentMode | None = None
    """pull or remote: the mode this cluster ends in, instead of the BootstrapConfig's
    spec.mode."""


class ClusterSpec(ApiModel):
    """How bundler reaches and deploys to the cluster."""

    values: FreeForm = Field(default_factory=dict)
    """Free-form values that Bundle templates read as cluster.values (Fleet's ClusterValues). For
    an imported Cluster API cluster, values.Cluster is the CAPI Cluster object, kept by the
    importer."""
    kubeConfigSecret: str | None = None
    """Name of a Secret in the workspace whose key `value` holds the cluster's kubeconfig (as
    Cluster API writes <cluster>-kubeconfig). Needed in remote mode and for bootstrap."""
    agentMode: AgentMode = AgentMode.PULL
    """pull (default): an agent in the downstream cluster pulls its BundleDeployments. remote:
    the agents on the management cluster write HelmReleases there that deploy through
    kubeConfigSecret. Changing it hands the releases over without uninstalling them."""
    paused: bool = False
    """true: new deployments for this cluster are staged but never promoted, none is created,
    and its agent applies no new options. Default false."""
    bootstrap: ClusterBootstrap | None = None
    """Overrides of the workspace's BootstrapConfig for this cluster (with `bundler manager
    --bootstrap`)."""
    schedule: Schedule | None = None
    """Maintenance windows of this cluster: new deployments of any Bundle are promoted and
    created on it only inside them (and inside the Bundle's own spec.schedule). An invalid
    schedule allows nothing (Ready=False, InvalidSpec). Unset: at any time."""


class AgentFluxStatus(ApiModel):
    """What the agent found of the Flux that deploys for it (the cluster's own in pull mode, the
    management cluster's in remote mode)."""

    supported: bool
    """Whether Flux serves every API bundler writes: HelmRelease helm.toolkit.fluxcd.io/v2,
    HelmRepository and OCIRepository source.toolkit.fluxcd.io/v1 (Flux v2.6.0 or later)."""
    reason: str | None = None
    """FluxNotInstalled or FluxTooOld when not supported."""
    message: str | None = None
    """What is missing or too old, and what to install."""


class AgentStatus(ApiModel):
    """What the cluster's agent last reported at its check-in (heartbeat)."""

    lastSeen: str | None = None
    """When the agent last checked in (RFC 3339); it does every minute by default. Silent longer
    than the manager's --offline-after (default 300 s), the cluster is Offline."""
    version: str | None = None
    """bundler version of that agent."""
    # Read by bundler.core.handover and the bootstrap.
    mode: AgentMode | None = None
    """Which kind of agent checked in last: pull or remote. Bootstrap waits for a pull agent;
    after a switch to remote mode, the remote agents wait for the pull agent to let go."""
    releasesHandedOver: bool | None = None
    """Set by the pull agent: true once it let go of all its releases because its Cluster is in
    remote mode."""
    handoverPending: str | None = None
    """Why the remote agents do not adopt the releases yet, and how to force it (the annotation
    bundler.dev/force-handover: "true")."""
    flux: AgentFluxStatus | None = None
    """Whether the Flux that deploys for this cluster is one bundler can use; the Cluster's
    FluxSupported condition says the same."""


class ClusterDisplay(ApiModel):
    """Short texts for `kubectl get clusters.bundler.dev`."""

    readyBundles: str = ""
    """Ready Bundles of those placed on this cluster, e.g. 4/4 (the BUNDLES-READY column)."""
    state: DisplayState | None = None
    """The STATE column: the reason of the Ready condition. The worst state among the Bundles
    on this cluster, Ready (also when none is placed here), Paused (spec.paused), Offline, or
    what holds the Cluster itself back: InvalidName, InvalidSpec, ControlPlaneNotInitialized,
    KubeconfigSecretMissing (a Cluster API import gate)."""


class ClusterStatus(ApiModel):
    """Written by the manager (and, in status.agent, by the cluster's agent)."""

    namespace: str | None = None
    """The cluster namespace on the management cluster holding this Cluster's BundleDeployments
    (cluster-<workspace>-<name>-<hash>). Informational: bundler computes it and never trusts
    this field."""
    agent: AgentStatus | None = None
    """What the cluster's agent last reported."""
    summary: Summary | None = None
    """How many of the Bundles placed on this cluster are in each state."""
    display: ClusterDisplay | None = None
    """Short texts for kubectl get."""
    nonReadyBundles: list[NonReadyBundle] = Field(default_factory=list, max_length=NON_READY_MAX)
    """Up to 10 Bundles not Ready on this cluster, worst state first, each with the reason."""
    schedule: ScheduleStatus | None = None
    """Whether the Cluster's spec.schedule allows changes now, and its current or next
    window."""
    conditions: Conditions = Field(default_factory=list)
    """Ready (False with the worst state of its Bundles as reason, or InvalidName, InvalidSpec
    (an invalid spec.schedule), Offline,
    Paused, or the Cluster API gate it waits for; reason Paused also while True for a paused
    Cluster); FluxSupported once the agent checked its Flux (False
    with reason FluxNotInstalled or FluxTooOld); with bootstrap, FluxInstalled, AgentConnected
    and Bootstrapped. At most 32."""


class Cluster(ApiModel):
    """One downstream cluster in a workspace. Its labels are what targets and ClusterGroups
    select, its spec.values what templates read; bundler gives it a cluster namespace on the
    management cluster for its BundleDeployments. Written by hand, by `bundler cluster
    register` or by the Cluster API import. The name is a DNS label (at most 63 characters)."""

    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    """The versioned schema of this object: bundler.dev/v1alpha1."""
    kind: Literal["Cluster"] = "Cluster"
    """The kind of this object: Cluster."""
    metadata: ObjectMeta
    spec: ClusterSpec = Field(default_factory=ClusterSpec)
    """How bundler reaches the cluster and what templates know of it."""
    status: ClusterStatus | None = None
    """Written by the manager and the cluster's agent: how its Bundles are doing."""


class ClusterGroupSpec(ApiModel):
    """Which Clusters belong to the group."""

    selector: LabelSelector
    """Selects the member Clusters of the group's workspace by their labels; {} selects every
    Cluster."""


class ClusterGroupDisplay(ApiModel):
    """Short texts for `kubectl get clustergroups`."""

    readyClusters: str = ""
    """Members whose Bundles are all Ready, of all members, e.g. 2/3 (a member running no Bundle
    counts as Ready)."""
    state: DisplayState | None = None
    """The STATE column: the reason of the Ready condition, the worst state of a member
    cluster (Ready also when none runs a Bundle)."""


class ClusterGroupStatus(ApiModel):
    """Written by the manager: the roll-up over the member clusters."""

    clusterCount: int = 0
    """How many Clusters the selector picks (the CLUSTERS column)."""
    nonReadyClusterCount: int = 0
    """How many of them have a Bundle that is not Ready (the NON-READY column)."""
    nonReadyClusters: list[ObjectKey] = Field(default_factory=list, max_length=NON_READY_MAX)
    """Up to 10 of those clusters, as namespace/name, worst state first."""
    summary: Summary | None = None
    """How many deployments on the member clusters are in each state."""
    display: ClusterGroupDisplay | None = None
    """Short texts for kubectl get."""
    conditions: Conditions = Field(default_factory=list)
    """Ready (False with the worst state of a member cluster as reason). At most 32."""


class ClusterGroup(ApiModel):
    """A label selector over the Clusters of its workspace; targets and partitions pick its
    members by name (clusterGroup) or by its labels (clusterGroupSelector)."""

    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    """The versioned schema of this object: bundler.dev/v1alpha1."""
    kind: Literal["ClusterGroup"] = "ClusterGroup"
    """The kind of this object: ClusterGroup."""
    metadata: ObjectMeta
    spec: ClusterGroupSpec
    """Which Clusters belong to the group."""
    status: ClusterGroupStatus | None = None
    """Written by the manager: how the member clusters are doing."""
