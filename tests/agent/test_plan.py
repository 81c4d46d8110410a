"""bundler.core.agent.plan: the agent's decision, its reading of HelmReleases and its status."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundledeployment import (
    BundleDeployment,
    BundleDeploymentStatus,
    ReleaseStatus,
)
from bundler.api.meta import CONDITION_MESSAGE_MAX, ConditionStatus
from bundler.api.summary import DeploymentState
from bundler.core.agent.plan import (
    APPLIED,
    ApplyOutcome,
    Decision,
    Observation,
    Reason,
    ReleaseReport,
    Step,
    decide,
    for_chart_version,
    next_status,
    read_release,
    same_chart_version,
    status_changed,
    status_patch,
    unready_dependencies,
)
from bundler.core.bounds import TRUNCATED_MARKER
from bundler.core.state import ConditionType, deployment_state, find_condition, state_message
from tests.support.agent.objects import bd_model, bd_object, helm_release, ready_status

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
            Reason.PROGRESSING,
            f"{WAITING_FOR_6_1} (last released 6.0.0)",
        ),
        (
            helm_release(),
            "6.1.0",
            False,
            Reason.PROGRESSING,
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


RELEASED_1_0 = ReleaseStatus(name="app", namespace="app", chartVersion="1.0.0", revision=1)
READY_REPORT = ReleaseReport(True, "InstallSucceeded", "Helm install succeeded", RELEASED_1_0)
OLD_RELEASE_READY = ReleaseReport(
    True,
    "InstallSucceeded",
    "Helm install succeeded",
    ReleaseStatus(name="app", namespace="app", chartVersion="0.9.0", revision=1),
)
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
            OLD_RELEASE_READY,
            DeploymentState.NOT_READY,
            "Progressing: waiting for Flux to release chart version 1.0.0 (last released 0.9.0)",
        ),
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
        (
            Decision(Step.WAIT, ("db",)),
            None,
            ABSENT,
            DeploymentState.WAIT_APPLIED,
            "DependencyNotReady: waiting for bundle db to be Ready on this cluster (dependsOn)",
        ),
        (
            Decision(Step.HOLD),
            None,
            ABSENT,
            DeploymentState.WAIT_APPLIED,
            "Paused: the BundleDeployment is paused: deployment s-5352fd5526c9 waits",
        ),
    ],
    ids=[
        "ready",
        "older-chart-still-released",
        "release-failed",
        "flux-missing",
        "invalid-options",
        "waiting",
        "paused",
    ],
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


def test_options_not_applied_yet_do_not_wait_for_their_chart_version() -> None:
    """Paused on older options: the release of those options is what Ready describes."""
    bd = bd_model(paused=True, status={"appliedDeploymentID": "s-old"})
    status = next_status(bd, Observation(Decision(Step.HOLD), None, OLD_RELEASE_READY, NOW))
    assert status.ready is True
    assert status.release == OLD_RELEASE_READY.release


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


def test_a_huge_flux_message_is_truncated_in_the_status() -> None:
    huge = helm_release(ready="False", reason="UpgradeFailed", message="x" * 2 * 1024 * 1024)
    bd = bd_model()
    observation = Observation(Decision(Step.APPLY), APPLIED, read_release(huge), NOW)
    status = next_status(bd, observation)
    ready = find_condition(bd.model_copy(update={"status": status}), ConditionType.READY)
    assert ready is not None and ready.reason == "UpgradeFailed"
    assert len(ready.message.encode()) <= CONDITION_MESSAGE_MAX
    assert ready.message.endswith(TRUNCATED_MARKER)


WAIT_FAILED = (
    "Helm install failed for release apps/app with chart app@1.0.0: "
    "resource Deployment/apps/web not ready. status: InProgress, message: Available: 0/1\n"
    "resource ClusterRole//web-reader not ready. status: NotFound, message: \n"
    "context deadline exceeded"
)
HOOKS = {"app-smoke": {"phase": "Failed"}, "app-ping": {"phase": "Succeeded"}}

# (release, (kind, namespace, name, status, message) of each object reported)
OBJECT_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str, str]]]] = [
    (
        "helms-wait-names-the-objects",
        helm_release(ready="False", reason="InstallFailed", message=WAIT_FAILED),
        [
            ("Deployment", "apps", "web", "InProgress", "Available: 0/1"),
            ("ClusterRole", "", "web-reader", "NotFound", ""),
        ],
    ),
    (
        "fluxs-wait-timeout",
        helm_release(
            ready="False",
            reason="InstallFailed",
            message="Helm install failed for release apps/app with chart app@1.0.0+0123456789ab: "
            "timeout waiting for: [Deployment/apps/web status: 'InProgress', "
            "ClusterRole/web-reader status: 'NotFound']",
        ),
        [
            ("Deployment", "apps", "web", "InProgress", ""),
            ("ClusterRole", "", "web-reader", "NotFound", ""),
        ],
    ),
    (
        "fluxs-wait-stalled-with-errors",
        helm_release(
            ready="False",
            reason="UpgradeFailed",
            message="Helm upgrade failed: failed early due to stalled resources: "
            "[Deployment/apps/web status: 'Failed': Progress deadline exceeded, retrying, "
            "Job/apps/migrate status: 'Failed': BackoffLimitExceeded]",
        ),
        [
            ("Deployment", "apps", "web", "Failed", "Progress deadline exceeded, retrying"),
            ("Job", "apps", "migrate", "Failed", "BackoffLimitExceeded"),
        ],
    ),
    (
        "failed-test-hooks-from-the-history",
        helm_release(
            ready="False",
            reason="TestFailed",
            message="test failed",
            history=[{**HISTORY[0], "testHooks": HOOKS}],
        ),
        [("Pod", "apps", "app-smoke", "Failed", "Helm test hook failed")],
    ),
    ("ready-reports-none", helm_release(message=WAIT_FAILED), []),
    ("a-plain-failure-names-no-object", helm_release(ready="False", message="boom"), []),
]


@pytest.mark.parametrize(
    ("release", "objects"), [c[1:] for c in OBJECT_CASES], ids=[c[0] for c in OBJECT_CASES]
)
def test_the_objects_flux_reports_not_ready_reach_the_status(
    release: dict[str, Any], objects: list[tuple[str, str, str, str, str]]
) -> None:
    report = read_release(release)
    found = [(o.kind, o.namespace, o.name, o.status, o.message) for o in report.objects]
    assert found == objects
    status = next_status(bd_model(), Observation(Decision(Step.APPLY), APPLIED, report, NOW))
    assert [(o.kind, o.name) for o in status.nonReadyStatus] == [(o[0], o[2]) for o in objects]


def test_the_objects_reported_are_bounded() -> None:
    many = "\n".join(
        f"resource ConfigMap/apps/c{i} not ready. status: InProgress, message: {'x' * 2000}"
        for i in range(15)
    )
    report = read_release(helm_release(ready="False", reason="InstallFailed", message=many))
    assert len(report.objects) == 10
    assert all(len(o.message) <= 1024 for o in report.objects)


def _with_states(bd: BundleDeployment, states: list[str]) -> BundleDeployment:
    obj = bd.to_wire()
    obj["spec"]["options"]["dependsOn"] = [
        {"name": d["name"], "acceptedStates": states} for d in obj["spec"]["options"]["dependsOn"]
    ]
    return BundleDeployment.model_validate(obj)


@pytest.mark.parametrize(
    ("states", "db_status", "unready"),
    [
        (["NotReady", "Ready"], {"ready": False}, []),
        (["Ready"], {"ready": False}, ["db"]),
        (["Ready", "Modified"], {"ready": True, "nonModified": False}, []),
        (["Ready"], {"ready": True, "nonModified": False}, ["db"]),
    ],
    ids=["not-ready-accepted", "not-ready-refused", "modified-accepted", "modified-refused"],
)
def test_accepted_states_decide_whether_a_dependency_holds_back(
    states: list[str], db_status: dict[str, Any], unready: list[str]
) -> None:
    db = bd_object("db")
    db["status"] = {**ready_status(db), **db_status}
    dependent = _with_states(bd_model(depends_on=("db",)), states)
    assert unready_dependencies(dependent, [BundleDeployment.model_validate(db)]) == unready
