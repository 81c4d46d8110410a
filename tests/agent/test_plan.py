"""bundler.core.agent_plan: the agent's decision, its reading of HelmReleases and its status."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundledeployment import (
    BundleDeployment,
    BundleDeploymentStatus,
    ReleaseStatus,
)
from bundler.api.meta import ConditionStatus
from bundler.api.summary import DeploymentState
from bundler.core.agent_plan import (
    APPLIED,
    ApplyOutcome,
    Decision,
    Observation,
    Reason,
    ReleaseReport,
    Step,
    decide,
    next_status,
    read_release,
    status_changed,
    status_patch,
    unready_dependencies,
)
from bundler.core.state import ConditionType, deployment_state, find_condition, state_message
from tests.agent.objects import bd_model, bd_object, helm_release, ready_status

NOW = "2024-01-01T00:00:00Z"
LATER = "2024-01-01T00:05:00Z"
HISTORY = [
    {"name": "app", "namespace": "apps", "chartVersion": "1.2.0", "version": 3},
    {"name": "app", "namespace": "apps", "chartVersion": "1.1.0", "version": 2},
]


@pytest.mark.parametrize(
    ("release", "ready", "reason"),
    [
        (None, False, Reason.NOT_DEPLOYED),
        (helm_release(), True, "InstallSucceeded"),
        (helm_release(generation=2, observed=1), False, Reason.PROGRESSING),
        (helm_release(generation=2, observed=2, condition_generation=1), False, Reason.PROGRESSING),
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
            Reason.PROGRESSING,
        ),
        (helm_release(ready="Unknown", reason="Progressing"), False, "Progressing"),
        (helm_release(ready=None, observed=None), False, Reason.PROGRESSING),
        (helm_release(deleting=True), False, Reason.UNINSTALLING),
        (helm_release(spec={"suspend": True}), False, Reason.SUSPENDED),
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


@pytest.mark.parametrize(
    ("depends", "siblings", "unready"),
    [
        ((), [], []),
        (("db",), [], ["db"]),
        (("db",), [bd_object("db", status={"ready": True})], ["db"]),
        (("db",), ["ready-db"], []),
        (("db", "cache"), ["ready-db"], ["cache"]),
    ],
    ids=["no-deps", "missing", "ready-but-old-deployment", "ready", "one-of-two"],
)
def test_unready_dependencies(
    depends: tuple[str, ...], siblings: list[Any], unready: list[str]
) -> None:
    built = []
    for sibling in siblings:
        if sibling == "ready-db":
            sibling = bd_object("db")
            sibling["status"] = ready_status(sibling)
        built.append(BundleDeployment.model_validate(sibling))
    assert unready_dependencies(bd_model(depends_on=depends), built) == unready


@pytest.mark.parametrize(
    ("kwargs", "applied", "unready", "step"),
    [
        ({}, False, [], Step.APPLY),
        ({"paused": True}, False, [], Step.HOLD),
        ({}, False, ["db"], Step.WAIT),
        ({}, True, ["db"], Step.APPLY),
        ({"paused": True}, False, ["db"], Step.HOLD),
    ],
    ids=["apply", "paused-holds", "new-options-wait", "applied-keeps-correcting", "pause-wins"],
)
def test_decide(kwargs: dict[str, Any], applied: bool, unready: list[str], step: Step) -> None:
    obj = bd_object(**kwargs)
    if applied:
        obj["status"] = {"appliedDeploymentID": obj["spec"]["deploymentID"]}
    obj["metadata"]["generation"] = 1
    decision = decide(BundleDeployment.model_validate(obj), unready)
    assert decision.step is step
    assert decision.waiting_on == (tuple(unready) if step is Step.WAIT else ())


READY_REPORT = ReleaseReport(True, "InstallSucceeded", "Helm install succeeded")
FAILED_REPORT = ReleaseReport(False, "UpgradeFailed", "Helm upgrade failed: boom")
ABSENT = read_release(None)
FLUX_MISSING = ApplyOutcome(Reason.FLUX_NOT_INSTALLED, "install Flux")


@pytest.mark.parametrize(
    ("decision", "outcome", "report", "state", "message"),
    [
        (Decision(Step.APPLY), APPLIED, READY_REPORT, DeploymentState.READY, ""),
        (
            Decision(Step.APPLY),
            APPLIED,
            FAILED_REPORT,
            DeploymentState.NOT_READY,
            "UpgradeFailed: Helm upgrade failed: boom",
        ),
        (
            Decision(Step.APPLY),
            FLUX_MISSING,
            ABSENT,
            DeploymentState.ERR_APPLIED,
            "FluxNotInstalled: install Flux",
        ),
        (
            Decision(Step.APPLY),
            ApplyOutcome(Reason.INVALID_OPTIONS, "bad repo"),
            ABSENT,
            DeploymentState.ERR_APPLIED,
            "InvalidOptions: bad repo",
        ),
        (Decision(Step.WAIT, ("db",)), None, ABSENT, DeploymentState.WAIT_APPLIED, ""),
        (Decision(Step.HOLD), None, ABSENT, DeploymentState.WAIT_APPLIED, ""),
    ],
    ids=["ready", "release-failed", "flux-missing", "invalid-options", "waiting", "paused"],
)
def test_next_status_gives_the_state(
    decision: Decision,
    outcome: ApplyOutcome | None,
    report: ReleaseReport,
    state: DeploymentState,
    message: str,
) -> None:
    bd = bd_model()
    status = next_status(bd, Observation(decision, outcome, report, NOW))
    after = bd.model_copy(update={"status": status})
    assert deployment_state(after) is state
    assert state_message(after) == message


def test_flux_not_installed_sets_ready_false_with_that_reason() -> None:
    bd = bd_model()
    status = next_status(bd, Observation(Decision(Step.APPLY), FLUX_MISSING, ABSENT, NOW))
    ready = find_condition(bd.model_copy(update={"status": status}), ConditionType.READY)
    assert ready is not None
    assert (ready.status, ready.reason) == (ConditionStatus.FALSE, Reason.FLUX_NOT_INSTALLED)


def test_waiting_names_the_dependencies() -> None:
    bd = bd_model(depends_on=("db", "cache"))
    decision = Decision(Step.WAIT, ("cache", "db"))
    status = next_status(bd, Observation(decision, None, ABSENT, NOW))
    ready = find_condition(bd.model_copy(update={"status": status}), ConditionType.READY)
    assert ready is not None
    assert ready.reason == Reason.DEPENDENCY_NOT_READY
    assert "cache, db" in ready.message


def test_failed_apply_keeps_the_previously_applied_id() -> None:
    bd = bd_model(status={"appliedDeploymentID": "s-old"})
    status = next_status(bd, Observation(Decision(Step.APPLY), FLUX_MISSING, ABSENT, NOW))
    assert status.appliedDeploymentID == "s-old"


def test_same_observation_later_is_no_change() -> None:
    bd = bd_model()
    seen = Observation(Decision(Step.APPLY), APPLIED, READY_REPORT, NOW)
    first = next_status(bd, seen)
    again = next_status(
        bd.model_copy(update={"status": first}),
        Observation(Decision(Step.APPLY), APPLIED, READY_REPORT, LATER),
    )
    assert not status_changed(first, again)
    assert status_changed(None, first)
    assert status_changed(first, first.model_copy(update={"ready": False}))


def test_status_patch_removes_what_is_absent() -> None:
    patch = status_patch(BundleDeploymentStatus(ready=True))
    assert patch["status"]["release"] is None
    assert patch["status"]["appliedDeploymentID"] is None
    assert patch["status"]["ready"] is True
