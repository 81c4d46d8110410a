"""bundler.core.delivery.helm: how the HelmRelease is read back (readiness, Flux's reasons, drift,
the chart version released), and how drift reaches the BundleDeployment's status."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundledeployment import ReleaseStatus
from bundler.api.summary import DeploymentState
from bundler.core.agent.plan import (
    APPLIED,
    Decision,
    Observation,
    Step,
    next_status,
    status_changed,
)
from bundler.core.delivery import ReportReason
from bundler.core.delivery.helm import for_chart_version, read_release, same_chart_version
from bundler.core.state import ConditionType, deployment_state, find_condition, state_message
from tests.support.agent.objects import HISTORY, LATER, NOW, bd_model, helm_release


@pytest.mark.parametrize(
    ("release", "ready", "reason"),
    [
        (None, False, ReportReason.NOT_DEPLOYED),
        (helm_release(), True, "InstallSucceeded"),
        (helm_release(generation=2, observed=1), False, ReportReason.PROGRESSING),
        (
            helm_release(generation=2, observed=2, condition_generation=1),
            False,
            ReportReason.PROGRESSING,
        ),
        (helm_release(generation=2, observed=2, condition_generation=2), True, "InstallSucceeded"),
        (helm_release(ready="False", reason="UpgradeFailed"), False, "UpgradeFailed"),
        (
            helm_release(generation=2, observed=1, ready="False", reason="ArtifactFailed"),
            False,
            "ArtifactFailed",
        ),
        (
            helm_release(
                ready="False", reason="UpgradeFailed", condition_generation=1, generation=2
            ),
            False,
            ReportReason.PROGRESSING,
        ),
        (helm_release(ready="Unknown", reason="Progressing"), False, "Progressing"),
        (helm_release(ready=None, observed=None), False, ReportReason.PROGRESSING),
        (helm_release(deleting=True), False, ReportReason.UNINSTALLING),
        (helm_release(spec={"suspend": True}), False, ReportReason.SUSPENDED),
    ],
    ids=[
        "absent",
        "ready",
        "generation-not-observed",
        "ready-condition-of-older-generation",
        "ready-condition-of-this-generation",
        "upgrade-failed-copied",
        "artifact-failed-before-observing",
        "stale-failure-ignored",
        "unknown-copied",
        "no-status-yet",
        "being-deleted",
        "suspended",
    ],
)
def test_read_release(release: dict[str, Any] | None, ready: bool, reason: str) -> None:
    report = read_release(release)
    assert (report.ready, report.reason) == (ready, reason)


def test_read_release_copies_flux_message_and_history() -> None:
    failed = helm_release(ready="False", reason="UpgradeFailed", message="boom", history=HISTORY)
    report = read_release(failed)
    assert report.message == "boom"
    assert report.release == ReleaseStatus(
        name="app", namespace="apps", chartVersion="1.2.0", revision=3
    )


def test_read_release_without_history_has_no_release() -> None:
    assert read_release(helm_release()).release is None


DRIFT_MESSAGE = "Cluster state of release apps/app.v1 has drifted from the desired state:\n..."


def _with_drift(release: dict[str, Any], status: str) -> dict[str, Any]:
    drifted = {"type": "Drifted", "status": status, "reason": "DriftDetected"}
    release["status"]["conditions"].append({**drifted, "message": DRIFT_MESSAGE})
    return release


@pytest.mark.parametrize(
    ("release", "drift"),
    [
        (helm_release(), None),
        (_with_drift(helm_release(), "False"), None),
        (_with_drift(helm_release(), "True"), DRIFT_MESSAGE),
        (_with_drift(helm_release(ready="False", reason="UpgradeFailed"), "True"), DRIFT_MESSAGE),
    ],
    ids=["no-drift-detection", "no-drift-detected", "drifted", "drifted-and-failed"],
)
def test_read_release_reports_flux_drift(release: dict[str, Any], drift: str | None) -> None:
    assert read_release(release).drift == drift


def released(*versions: str) -> list[dict[str, Any]]:
    """Flux's history, newest first, one entry per chart version."""
    revisions = range(len(versions), 0, -1)
    return [
        {"name": "app", "namespace": "apps", "chartVersion": v, "version": r}
        for v, r in zip(versions, revisions, strict=True)
    ]


WAITING_FOR_6_1 = "waiting for Flux to release chart version 6.1.0"


@pytest.mark.parametrize(
    ("release", "wanted", "ready", "reason", "message"),
    [
        (helm_release(history=released("6.1.0", "6.0.0")), "6.1.0", True, "InstallSucceeded", ""),
        (
            helm_release(history=released("6.0.0")),
            "6.1.0",
            False,
            ReportReason.PROGRESSING,
            f"{WAITING_FOR_6_1} (last released 6.0.0)",
        ),
        (
            helm_release(),
            "6.1.0",
            False,
            ReportReason.PROGRESSING,
            f"{WAITING_FOR_6_1} (no release recorded yet)",
        ),
        (helm_release(history=released("6.1.0+0123456789ab")), "6.1.0", True, "", ""),
        (helm_release(history=released("6.1.0+build.1")), "6.1.0_build.1", True, "", ""),
        (
            helm_release(history=released("6.0.0"), ready="False", reason="ArtifactFailed"),
            "6.1.0",
            False,
            "ArtifactFailed",
            "",
        ),
        (
            helm_release(history=released("6.0.0"), ready="Unknown", reason="Progressing"),
            "6.1.0",
            False,
            "Progressing",
            "Helm install succeeded",
        ),
        (helm_release(history=released("6.0.0")), None, True, "InstallSucceeded", ""),
    ],
    ids=[
        "history-matches",
        "history-older",
        "history-empty",
        "oci-digest-as-build-metadata",
        "oci-tag-spelling",
        "flux-failure-kept",
        "flux-progress-kept",
        "no-wanted-version",
    ],
)
def test_ready_waits_for_the_wanted_chart_version(
    release: dict[str, Any], wanted: str | None, ready: bool, reason: str, message: str
) -> None:
    report = for_chart_version(read_release(release), wanted)
    assert report.ready is ready
    if reason:
        assert report.reason == reason
    if message:
        assert report.message == message
    assert report.release == read_release(release).release


@pytest.mark.parametrize(
    ("released_version", "wanted", "same"),
    [
        ("6.1.0", "6.1.0", True),
        ("6.1.0+0123456789ab", "6.1.0", True),
        ("6.1.0+b", "6.1.0_b", True),
        ("v6.1.0", "6.1.0", True),
        ("6.1.0-rc.1", "6.1.0", False),
        ("6.0.0", "6.1.0", False),
        ("latest", "latest", True),
        ("latest", "6.1.0", False),
    ],
    ids=[
        "equal",
        "digest-build",
        "tag-spelling",
        "v-prefix",
        "prerelease",
        "older",
        "text",
        "mixed",
    ],
)
def test_same_chart_version(released_version: str, wanted: str, same: bool) -> None:
    assert same_chart_version(released_version, wanted) is same


def test_drift_makes_the_deployment_modified_until_flux_sees_none() -> None:
    bd = bd_model()
    drifted = read_release(_with_drift(helm_release(history=released("1.0.0")), "True"))
    observed = Observation(Decision(Step.APPLY), APPLIED, drifted, NOW)
    after = bd.model_copy(update={"status": next_status(bd, observed)})
    assert after.status is not None and not after.status.nonModified
    assert deployment_state(after) is DeploymentState.MODIFIED
    assert state_message(after) == f"Drifted: {DRIFT_MESSAGE}"

    healed = read_release(_with_drift(helm_release(history=released("1.0.0")), "False"))
    status = next_status(after, Observation(Decision(Step.APPLY), APPLIED, healed, LATER))
    again = after.model_copy(update={"status": status})
    assert status.nonModified and deployment_state(again) is not DeploymentState.MODIFIED
    assert find_condition(again, ConditionType.MODIFIED) is None
    assert status_changed(after.status, status)
