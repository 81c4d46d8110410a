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
since that report is its heartbeat, and removed once the remote side may adopt.
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
    """Whether the remote side may adopt the releases of the remote-mode Cluster `cluster`."""
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
    if remote_gate(cluster).step is HandoverStep.WAIT:
        return PullIdentityStep.HOLD
    return PullIdentityStep.REMOVE
