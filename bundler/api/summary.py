"""Deployment states and the counts every status roll-up carries (Bundle, Cluster, ClusterGroup)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints, WithJsonSchema

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
    """How many deployments (one per targeted Bundle and Cluster) are in each state."""

    desiredReady: int = 0
    """All deployments counted: every one should be Ready."""
    ready: int = 0
    """Ready: applied, and Flux reports the release Ready on the wanted chart version."""
    notReady: int = 0
    """NotReady: applied, but the release is not Ready (Flux is still working, or it failed)."""
    pending: int = 0
    """Pending: the cluster is targeted, but has no BundleDeployment yet."""
    waitApplied: int = 0
    """WaitApplied: the agent has not applied the current deploymentID yet."""
    errApplied: int = 0
    """ErrApplied: the agent's last attempt to apply the current deploymentID failed, or the
    values could not be rendered for the cluster."""
    outOfSync: int = 0
    """OutOfSync: a newer deployment is staged, held back by the rollout strategy or by a pause
    (spec.paused of the Bundle or the Cluster)."""
    modified: int = 0
    """Modified: the release differs from what was applied."""
    offline: int = 0
    """Offline: the cluster's agent has not checked in within the manager's --offline-after."""


class DisplayState(StrEnum):
    """The STATE column of `kubectl get`: the reason of the object's Ready condition, so the
    columns and the conditions never disagree. A deployment state (worst first, as
    DeploymentState), or a word for what holds the whole object back."""

    ERR_APPLIED = "ErrApplied"
    WAIT_APPLIED = "WaitApplied"
    OFFLINE = "Offline"
    NOT_READY = "NotReady"
    PENDING = "Pending"
    OUT_OF_SYNC = "OutOfSync"
    MODIFIED = "Modified"
    READY = "Ready"
    # Set on the Bundle or the Cluster: changes are staged, never promoted.
    PAUSED = "Paused"
    # A Bundle as a whole.
    NO_TARGETS = "NoTargets"
    INVALID_SPEC = "InvalidSpec"
    VERSION_NOT_RESOLVED = "VersionNotResolved"
    CREDENTIALS_NOT_FOUND = "CredentialsNotFound"
    CREDENTIALS_REFUSED = "CredentialsRefused"
    CREDENTIALS_COPY_BLOCKED = "CredentialsCopyBlocked"
    VALUES_NOT_FOUND = "ValuesNotFound"
    VALUES_REFUSED = "ValuesRefused"
    VALUES_COPY_BLOCKED = "ValuesCopyBlocked"
    DELETION_HELD = "DeletionHeld"
    ROLLOUT_HALTED = "RolloutHalted"
    ROLLED_BACK = "RolledBack"
    # A Bundle whose rollout waits at a gate (rolloutStrategy.bakeTime, approval, schedules).
    WAITING_FOR_APPROVAL = "WaitingForApproval"
    BAKING = "Baking"
    OUTSIDE_WINDOW = "OutsideWindow"
    # A Cluster itself: a name Kubernetes labels cannot hold, or a Cluster API import gate.
    INVALID_NAME = "InvalidName"
    CONTROL_PLANE_NOT_INITIALIZED = "ControlPlaneNotInitialized"
    KUBECONFIG_SECRET_MISSING = "KubeconfigSecretMissing"


# "namespace/name" of a Bundle or Cluster: a DNS-1123 label, a slash, a DNS-1123 subdomain.
OBJECT_KEY_MAX = 63 + 1 + 253
ObjectKey = Annotated[str, StringConstraints(max_length=OBJECT_KEY_MAX)]

# How many entries a status lists (nonReady, nonReadyBundles, nonReadyClusters), as Fleet does.
NON_READY_MAX = 10


# How many objects of one release a status lists, and how much of each one's message it keeps.
NON_READY_OBJECTS_MAX = 10
NON_READY_OBJECT_MESSAGE_MAX = 1024


class NonReadyStatus(ApiModel):
    """One object of a release that is not ready, as Flux's helm-controller reported it (its
    wait for the release's objects, or a failed test hook)."""

    kind: str
    """The object's kind, e.g. Deployment."""
    namespace: str = ""
    """The object's namespace (empty for a cluster-scoped object)."""
    name: str
    """The object's name."""
    status: str = ""
    """Its status as Flux computed it (kstatus: InProgress, Failed, NotFound, ...; Failed for a
    test hook)."""
    message: Annotated[
        str, WithJsonSchema({"type": "string", "maxLength": NON_READY_OBJECT_MESSAGE_MAX})
    ] = ""
    """Why, as Flux reported it; cut at 1 KiB."""


NonReadyStatuses = Annotated[list[NonReadyStatus], Field(max_length=NON_READY_OBJECTS_MAX)]


class NonReadyResource(ApiModel):
    """One targeted cluster where the Bundle is not Ready."""

    cluster: ObjectKey
    """The Cluster, as `namespace/name`."""
    state: DeploymentState
    """Its state: ErrApplied, WaitApplied, Offline, NotReady, Pending, OutOfSync or Modified."""
    message: Message = ""
    """Why: Flux's reason and message, the agent's (e.g. waiting for a dependsOn bundle), or the
    template error; cut at 32 KiB."""
    nonReadyStatus: NonReadyStatuses = Field(default_factory=list)
    """Up to 10 objects of the release that are not ready there, as Flux reported them."""


class NonReadyBundle(ApiModel):
    """One Bundle that is not Ready on the Cluster."""

    bundle: ObjectKey
    """The Bundle, as `namespace/name`."""
    state: DeploymentState
    """Its state: ErrApplied, WaitApplied, Offline, NotReady, Pending, OutOfSync or Modified."""
    message: Message = ""
    """Why: Flux's reason and message, the agent's, or the template error; cut at 32 KiB."""
    nonReadyStatus: NonReadyStatuses = Field(default_factory=list)
    """Up to 10 objects of the release that are not ready on this cluster, as Flux reported
    them."""
