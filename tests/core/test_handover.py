"""The agent mode handover rules: when the remote side adopts, when the pull agent lets go."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.handover import (
    ANNOTATION_FORCE_HANDOVER,
    ANNOTATION_PULL_IDENTITY_REMOVED,
    HandoverStep,
    PullIdentityStep,
    pull_agent_lets_go,
    pull_identity_step,
    releases_gate,
    remote_gate,
)

SEEN = "2026-01-01T00:00:00Z"


def remote_cluster(
    agent: dict[str, Any] | None, annotations: dict[str, str] | None = None, generation: int = 3
) -> Any:
    status = {} if agent is None else {"agent": agent}
    return {
        "metadata": {"name": "edge-1", "annotations": annotations or {}, "generation": generation},
        "spec": {"agentMode": "remote", "kubeConfigSecret": "edge-1-kubeconfig"},
        "status": status,
    }


@pytest.mark.parametrize(
    ("cluster", "step"),
    [
        (remote_cluster(None), HandoverStep.ADOPT),
        (remote_cluster({"lastSeen": SEEN}), HandoverStep.ADOPT),
        (remote_cluster({"lastSeen": SEEN, "mode": "remote"}), HandoverStep.ADOPT),
        (remote_cluster({"lastSeen": SEEN, "mode": "pull"}), HandoverStep.WAIT),
        (
            remote_cluster({"lastSeen": SEEN, "mode": "pull", "releasesHandedOver": False}),
            HandoverStep.WAIT,
        ),
        (
            remote_cluster({"lastSeen": SEEN, "mode": "pull", "releasesHandedOver": True}),
            HandoverStep.ADOPT,
        ),
        (
            remote_cluster({"mode": "pull"}, {ANNOTATION_FORCE_HANDOVER: "true"}),
            HandoverStep.ADOPT,
        ),
        (
            remote_cluster({"mode": "pull"}, {ANNOTATION_FORCE_HANDOVER: "yes"}),
            HandoverStep.WAIT,
        ),
    ],
    ids=[
        "no-agent-ever-seen",
        "agent-of-unknown-mode",
        "remote-agent-seen-last",
        "pull-agent-holds-its-releases",
        "pull-agent-says-it-holds-them",
        "pull-agent-let-go",
        "forced-while-the-pull-agent-is-offline",
        "force-annotation-not-true",
    ],
)
def test_remote_side_adopts_only_what_no_pull_agent_holds(cluster: Any, step: HandoverStep) -> None:
    assert releases_gate(cluster).step is step
    verified = {**cluster["metadata"]["annotations"], ANNOTATION_PULL_IDENTITY_REMOVED: "3"}
    stamped = {**cluster, "metadata": {**cluster["metadata"], "annotations": verified}}
    assert remote_gate(stamped).step is step


def test_waiting_says_when_the_pull_agent_was_seen_and_how_to_force() -> None:
    gate = remote_gate(remote_cluster({"lastSeen": SEEN, "mode": "pull"}))
    assert SEEN in gate.message
    assert f"{ANNOTATION_FORCE_HANDOVER}=true" in gate.message
    verified = {ANNOTATION_PULL_IDENTITY_REMOVED: "3"}
    assert remote_gate(remote_cluster(None, verified)).message == ""


LET_GO = {"lastSeen": SEEN, "mode": "pull", "releasesHandedOver": True}

# The kubeconfig is copied only on the manager's word that the pull identity is gone: the Cluster's
# annotation for its current generation (3), never anything the pull agent writes in the status.
IDENTITY_GATE_CASES: list[tuple[str, Any, HandoverStep]] = [
    (
        "manager-verified",
        remote_cluster(LET_GO, {ANNOTATION_PULL_IDENTITY_REMOVED: "3"}),
        HandoverStep.ADOPT,
    ),
    ("never-verified", remote_cluster(LET_GO), HandoverStep.WAIT),
    (
        "verified-for-an-older-generation",
        remote_cluster(LET_GO, {ANNOTATION_PULL_IDENTITY_REMOVED: "2"}),
        HandoverStep.WAIT,
    ),
    (
        "pull-agent-claims-it-in-its-status",
        remote_cluster({**LET_GO, "pullIdentityRemoved": True, "annotations": "3"}),
        HandoverStep.WAIT,
    ),
    (
        "remote-from-the-start-unverified",
        remote_cluster(None, generation=1),
        HandoverStep.WAIT,
    ),
    (
        "forced-but-unverified",
        remote_cluster({"mode": "pull"}, {ANNOTATION_FORCE_HANDOVER: "true"}),
        HandoverStep.WAIT,
    ),
]


@pytest.mark.parametrize(
    ("cluster", "step"),
    [c[1:] for c in IDENTITY_GATE_CASES],
    ids=[c[0] for c in IDENTITY_GATE_CASES],
)
def test_the_kubeconfig_waits_for_the_managers_word_that_the_identity_is_gone(
    cluster: Any, step: HandoverStep
) -> None:
    gate = remote_gate(cluster)
    assert gate.step is step
    if gate.step is HandoverStep.WAIT:
        assert "waiting for the manager to remove the pull agent's identity" in gate.message


@pytest.mark.parametrize(
    ("spec", "lets_go"),
    [
        ({"agentMode": "remote"}, True),
        ({"agentMode": "pull"}, False),
        ({}, False),
    ],
    ids=["cluster-in-remote-mode", "cluster-in-pull-mode", "mode-defaulted-to-pull"],
)
def test_pull_agent_lets_go_once_its_cluster_is_in_remote_mode(
    spec: dict[str, str], lets_go: bool
) -> None:
    assert pull_agent_lets_go({"metadata": {"name": "edge-1"}, "spec": spec}) is lets_go


def pull_cluster() -> Any:
    return {"metadata": {"name": "edge-1"}, "spec": {"agentMode": "pull"}, "status": {}}


@pytest.mark.parametrize(
    ("cluster", "step"),
    [
        (pull_cluster(), PullIdentityStep.ENSURE),
        ({"metadata": {"name": "edge-1"}, "spec": {}}, PullIdentityStep.ENSURE),
        (remote_cluster(None), PullIdentityStep.REMOVE),
        (remote_cluster({"lastSeen": SEEN, "mode": "remote"}), PullIdentityStep.REMOVE),
        (remote_cluster({"lastSeen": SEEN, "mode": "pull"}), PullIdentityStep.HOLD),
        (
            remote_cluster({"lastSeen": SEEN, "mode": "pull", "releasesHandedOver": True}),
            PullIdentityStep.REMOVE,
        ),
        (
            remote_cluster({"mode": "pull"}, {ANNOTATION_FORCE_HANDOVER: "true"}),
            PullIdentityStep.REMOVE,
        ),
    ],
    ids=[
        "pull-mode",
        "mode-defaulted-to-pull",
        "remote-from-the-start",
        "remote-agent-seen-last",
        "pull-agent-yet-to-report-its-handover",
        "pull-agent-let-go",
        "handover-forced",
    ],
)
def test_pull_identity_exists_in_pull_mode_and_until_the_handover(
    cluster: Any, step: PullIdentityStep
) -> None:
    assert pull_identity_step(cluster) is step
