"""Deployment states and the counts every status roll-up carries (Bundle, Cluster, ClusterGroup)."""

from __future__ import annotations

from enum import StrEnum

from bundler.api.base import ApiModel


class DeploymentState(StrEnum):
    """State of one BundleDeployment; declaration order is severity order, worst first."""

    ERR_APPLIED = "ErrApplied"
    WAIT_APPLIED = "WaitApplied"
    OFFLINE = "Offline"
    NOT_READY = "NotReady"
    PENDING = "Pending"
    OUT_OF_SYNC = "OutOfSync"
    MODIFIED = "Modified"
    READY = "Ready"


class Summary(ApiModel):
    """How many BundleDeployments are in each state; desiredReady: all that should be Ready."""

    desiredReady: int = 0
    ready: int = 0
    notReady: int = 0
    pending: int = 0
    waitApplied: int = 0
    errApplied: int = 0
    outOfSync: int = 0
    modified: int = 0
    offline: int = 0


class NonReadyResource(ApiModel):
    """One BundleDeployment that is not Ready, as listed on a Bundle (at most 10 of them)."""

    cluster: str
    state: DeploymentState
    message: str = ""


class NonReadyBundle(ApiModel):
    """One Bundle that is not Ready on a Cluster, as listed on that Cluster."""

    bundle: str
    state: DeploymentState
    message: str = ""
