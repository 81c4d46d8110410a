"""Agent mode handover: when the side that takes a Cluster's releases over may start managing them.

A Cluster moving from pull to remote mode must never have two controllers on one Helm release. The
pull agent learns the mode from its own heartbeat (the answer to the status patch it already may
send carries its Cluster's spec), lets go of its releases (suspends and deletes its HelmReleases,
so Flux uninstalls nothing) and reports `status.agent.releasesHandedOver: true`. The remote side
adopts the releases (same release name and storage namespace) only once the Cluster says so: its
last heartbeat came from no pull agent, or the pull agent let go, or an operator forced it with
the annotation below because the pull agent is gone for good.

The pull agent's identity on the management cluster (bundler.core.agent.identity) exists for pull
mode only: a remote-mode Cluster's namespace holds the remote agent's kubeconfig copy, which that
identity could `get` by name. It is kept while the pull agent still has to report its handover,
since that report is its heartbeat, and removed once the releases are let go (`releases_gate`).

The kubeconfig copy and a pull identity never share the cluster namespace. Whether the identity is
gone is the manager's word, not the pull agent's (which may write anything into its Cluster's
status): after deleting the identity the manager reads each of its objects back from the API
server and, once none is left, annotates the Cluster `bundler.dev/pull-identity-removed` with the
Cluster's `metadata.generation` (an annotation: the pull agent may patch its Cluster's status, never
its metadata). The remote side copies the kubeconfig and adopts only while that annotation names
the Cluster's current generation (`remote_gate`): a Cluster switched back to pull mode (a new
generation) makes it stale at once, so no stamp outlives the mode it was given for. With the manager
stopped, nothing is stamped and the kubeconfig is not copied. The other way, the manager makes a
pull identity only once no kubeconfig copy is left in the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.api.cluster import AgentMode

# Set to "true" on a Cluster whose pull agent will never come back to let go of its releases.
ANNOTATION_FORCE_HANDOVER = "bundler.dev/force-handover"
FORCE_HANDOVER = "true"
# Written by the manager only: the Cluster generation for which it found no pull identity left.
ANNOTATION_PULL_IDENTITY_REMOVED = "bundler.dev/pull-identity-removed"
# Marks the remote agent's kubeconfig copy in a cluster namespace (bundler.agent.remote).
LABEL_KUBECONFIG_COPY = "bundler.dev/kubeconfig-copy"
KUBECONFIG_COPY_MARK = "true"


class HandoverStep(StrEnum):
    ADOPT = "Adopt"
    WAIT = "Wait"


class PullIdentityStep(StrEnum):
    """What the manager does with a Cluster's pull agent identity."""

    ENSURE = "Ensure"  # pull mode: create or repair it
    HOLD = "Hold"  # remote mode, handover pending: leave it as it is
    REMOVE = "Remove"  # remote mode, handover done: delete it


@dataclass(frozen=True)
class HandoverGate:
    step: HandoverStep
    message: str = ""


def remote_gate(cluster: Mapping[str, Any]) -> HandoverGate:
    """Whether the remote side may copy the kubeconfig of the remote-mode Cluster `cluster` into
    its cluster namespace and adopt its releases: the pull side let go of them, and the manager
    found the pull identity gone (for the Cluster's current generation)."""
    gate = releases_gate(cluster)
    if gate.step is HandoverStep.WAIT or pull_identity_removed(cluster):
        return gate
    return HandoverGate(
        HandoverStep.WAIT,
        "waiting for the manager to remove the pull agent's identity from the cluster namespace "
        "(the kubeconfig is copied there only then; is the manager running?)",
    )


def pull_identity_removed(cluster: Mapping[str, Any]) -> bool:
    """Whether the manager found no pull identity left for the Cluster as it is now."""
    meta = cluster.get("metadata") or {}
    stamp = (meta.get("annotations") or {}).get(ANNOTATION_PULL_IDENTITY_REMOVED)
    return stamp is not None and stamp == identity_removed_stamp(cluster)


def identity_removed_stamp(cluster: Mapping[str, Any]) -> str:
    """The value of ANNOTATION_PULL_IDENTITY_REMOVED for the Cluster as it is now."""
    return str((cluster.get("metadata") or {}).get("generation") or 0)


def releases_gate(cluster: Mapping[str, Any]) -> HandoverGate:
    """Whether the pull side let go of the releases of the remote-mode Cluster `cluster` (or
    never held them)."""
    meta = cluster.get("metadata") or {}
    agent = (cluster.get("status") or {}).get("agent") or {}
    if (meta.get("annotations") or {}).get(ANNOTATION_FORCE_HANDOVER) == FORCE_HANDOVER:
        return HandoverGate(HandoverStep.ADOPT)
    if agent.get("mode") != AgentMode.PULL.value or agent.get("releasesHandedOver") is True:
        return HandoverGate(HandoverStep.ADOPT)
    seen = agent.get("lastSeen") or "never"
    return HandoverGate(
        HandoverStep.WAIT,
        f"waiting for the pull agent (last seen {seen}) to let go of its releases; if it will "
        f"not come back, annotate the Cluster {ANNOTATION_FORCE_HANDOVER}={FORCE_HANDOVER}",
    )


def pull_agent_lets_go(cluster: Mapping[str, Any]) -> bool:
    """Whether a pull agent whose heartbeat was answered with `cluster` must let go of its
    releases: its Cluster is in remote mode now."""
    return (cluster.get("spec") or {}).get("agentMode") == AgentMode.REMOTE.value


def pull_identity_step(cluster: Mapping[str, Any]) -> PullIdentityStep:
    """What becomes of the pull agent identity of `cluster`."""
    if (cluster.get("spec") or {}).get("agentMode") != AgentMode.REMOTE.value:
        return PullIdentityStep.ENSURE
    if releases_gate(cluster).step is HandoverStep.WAIT:
        return PullIdentityStep.HOLD
    return PullIdentityStep.REMOVE
