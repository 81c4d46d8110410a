"""Deployment states and the counts every status roll-up carries (Bundle, Cluster, ClusterGroup)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import StringConstraints

from bundler.api.base import ApiModel
from bundler.api.meta import Message


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


# "namespace/name" of a Bundle or Cluster: a DNS-1123 label, a slash, a DNS-1123 subdomain.
OBJECT_KEY_MAX = 63 + 1 + 253
ObjectKey = Annotated[str, StringConstraints(max_length=OBJECT_KEY_MAX)]

# How many entries a status lists (nonReady, nonReadyBundles, nonReadyClusters), as Fleet does.
NON_READY_MAX = 10


class NonReadyResource(ApiModel):
    """One BundleDeployment that is not Ready, as listed on a Bundle (at most 10 of them)."""

    cluster: ObjectKey
    state: DeploymentState
    message: Message = ""


class NonReadyBundle(ApiModel):
    """One Bundle that is not Ready on a Cluster, as listed on that Cluster."""

    bundle: ObjectKey
    state: DeploymentState
    message: Message = ""
