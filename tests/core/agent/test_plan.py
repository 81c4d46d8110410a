"""bundler.core.agent.plan: the agent's decision and its status, from the delivery's reading of the
HelmRelease (bundler.core.delivery.helm)."""

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
    Step,
    decide,
    next_status,
    status_changed,
    status_patch,
    unready_dependencies,
)
from bundler.core.bounds import TRUNCATED_MARKER
from bundler.core.delivery import ReleaseReport
from bundler.core.delivery.helm import read_release
from bundler.core.state import ConditionType, deployment_state, find_condition, state_message
from tests.support.agent.objects import (
    HISTORY,
    LATER,
    NOW,
    bd_model,
    bd_object,
    helm_release,
    ready_status,
)


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
