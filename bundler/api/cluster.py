"""Cluster (one downstream cluster) and ClusterGroup (a label selector over Clusters)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.meta import Conditions, FreeForm, ObjectMeta
from bundler.api.selector import LabelSelector
from bundler.api.summary import (
    NON_READY_MAX,
    DeploymentState,
    NonReadyBundle,
    ObjectKey,
    Summary,
)


class AgentMode(StrEnum):
    PULL = "pull"
    REMOTE = "remote"


class ClusterBootstrap(ApiModel):
    """Per-Cluster overrides of the workspace's BootstrapConfig (bundler.api.bootstrap)."""

    enabled: bool | None = None
    fluxVersion: str | None = None
    agentVersion: str | None = None
    mode: AgentMode | None = None


class ClusterSpec(ApiModel):
    values: FreeForm = Field(default_factory=dict)
    kubeConfigSecret: str | None = None
    agentMode: AgentMode = AgentMode.PULL
    paused: bool = False
    bootstrap: ClusterBootstrap | None = None


class AgentStatus(ApiModel):
    lastSeen: str | None = None
    version: str | None = None
    # Which kind of agent checked in last (pull or remote): the bootstrap waits for a pull one,
    # the remote side for a pull agent to let go of its releases (bundler.core.handover).
    mode: AgentMode | None = None
    # The pull agent let go of its releases: its Cluster is in remote mode.
    releasesHandedOver: bool | None = None
    # Why the remote side does not adopt the releases yet, and how to force it.
    handoverPending: str | None = None


class ClusterDisplay(ApiModel):
    readyBundles: str = ""
    state: DeploymentState | None = None


class ClusterStatus(ApiModel):
    namespace: str | None = None
    agent: AgentStatus | None = None
    summary: Summary | None = None
    display: ClusterDisplay | None = None
    nonReadyBundles: list[NonReadyBundle] = Field(default_factory=list, max_length=NON_READY_MAX)
    conditions: Conditions = Field(default_factory=list)


class Cluster(ApiModel):
    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    kind: Literal["Cluster"] = "Cluster"
    metadata: ObjectMeta
    spec: ClusterSpec = Field(default_factory=ClusterSpec)
    status: ClusterStatus | None = None


class ClusterGroupSpec(ApiModel):
    selector: LabelSelector


class ClusterGroupDisplay(ApiModel):
    readyClusters: str = ""
    state: DeploymentState | None = None


class ClusterGroupStatus(ApiModel):
    clusterCount: int = 0
    nonReadyClusterCount: int = 0
    nonReadyClusters: list[ObjectKey] = Field(default_factory=list, max_length=NON_READY_MAX)
    summary: Summary | None = None
    display: ClusterGroupDisplay | None = None
    conditions: Conditions = Field(default_factory=list)


class ClusterGroup(ApiModel):
    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    kind: Literal["ClusterGroup"] = "ClusterGroup"
    metadata: ObjectMeta
    spec: ClusterGroupSpec
    status: ClusterGroupStatus | None = None
