"""Acceptance for bundler's rollout safety rules, the manager over real HTTP: offline clusters
never block a rollout, and mass deletion is held."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeStore
from bundler.runtime.clock import ManualClock
from tests.builders import WS, bundle, cluster
from tests.manager.conftest import (
    StartManager,
    check_in,
    create_world,
    deployment_of,
    deployments,
    report,
    settle_remote,
    status_of,
    world,
)
from tests.manager.test_http import admin, connect, remote, server  # noqa: F401

OFFLINE_AFTER = 300.0
ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
NAMES = ("a", "b", "c")


def promoted(store: Any) -> list[str]:
    """The clusters whose deployment runs values v=2 now (not only staged)."""
    return [
        n
        for n in NAMES
        if deployment_of(store, n)["spec"]["options"]["helm"].get("values") == {"v": 2}
    ]


# (offlineClusters, clusters promoted while b and c are offline)
OFFLINE_CASES = [
    ("default-ignores-offline-clusters", None, ["a", "b", "c"]),
    ("block-keeps-fleets-behaviour", "Block", ["a"]),
]


@pytest.mark.parametrize(
    ("offline_clusters", "expected"),
    [c[1:] for c in OFFLINE_CASES],
    ids=[c[0] for c in OFFLINE_CASES],
)
def test_offline_clusters_do_not_block_a_rollout(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
    clock: ManualClock,
    offline_clusters: str | None,
    expected: list[str],
) -> None:
    strategy: dict[str, Any] = {"maxUnavailable": 1}
    if offline_clusters is not None:
        strategy["offlineClusters"] = offline_clusters
    create_world(admin, world(*(cluster(n) for n in NAMES), bundle(ALL, rolloutStrategy=strategy)))
    manager = start_manager(remote, offline_after=OFFLINE_AFTER)
    for name in NAMES:
        check_in(admin, clock, name)
    settle_remote(manager, server.store)
    for name in NAMES:
        report(admin, name)
    settle_remote(manager, server.store)
    clock.advance(OFFLINE_AFTER + 2)
    check_in(admin, clock, "a")
    settle_remote(manager, server.store)
    assert status_of(server.store, BUNDLE, "app")["summary"]["offline"] == 2
    admin.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle_remote(manager, server.store)
    assert promoted(server.store) == expected


FLEET = [f"c{i}" for i in range(8)]
PROD = [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]
TYPO = [{"clusterSelector": {"matchLabels": {"env": "prd"}}}]


def ready_of(store: Any) -> dict[str, Any]:
    conditions = status_of(store, BUNDLE, "app")["conditions"]
    found: dict[str, Any] = next(c for c in conditions if c["type"] == "Ready")
    return found


def deployed(store: Any) -> set[str]:
    return {name for name, _ in deployments(store)}


def test_mass_deletion_is_held_until_allowed_for_its_generation(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
) -> None:
    create_world(admin, world(*(cluster(n, {"env": "prod"}) for n in FLEET), bundle(PROD)))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    admin.patch(BUNDLE, "app", {"spec": {"targets": TYPO}}, WS)
    settle_remote(manager, server.store)
    assert deployed(server.store) == set(FLEET)
    ready = ready_of(server.store)
    generation = server.store.get(BUNDLE, "app", WS)["metadata"]["generation"]
    assert (ready["status"], ready["reason"]) == ("False", "DeletionHeld")
    assert "would delete 8 of the bundle's 8 BundleDeployments" in ready["message"]
    allow = {"bundler.dev/allow-deletion": str(generation - 1)}
    admin.patch(BUNDLE, "app", {"metadata": {"annotations": allow}}, WS)
    settle_remote(manager, server.store)
    assert deployed(server.store) == set(FLEET)
    allow = {"bundler.dev/allow-deletion": str(generation)}
    admin.patch(BUNDLE, "app", {"metadata": {"annotations": allow}}, WS)
    settle_remote(manager, server.store)
    assert deployed(server.store) == set()


def test_reverting_a_held_deletion_releases_the_hold(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
) -> None:
    create_world(admin, world(*(cluster(n, {"env": "prod"}) for n in FLEET), bundle(PROD)))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    admin.patch(BUNDLE, "app", {"spec": {"targets": TYPO}}, WS)
    settle_remote(manager, server.store)
    assert ready_of(server.store)["reason"] == "DeletionHeld"
    admin.patch(BUNDLE, "app", {"spec": {"targets": PROD}}, WS)
    settle_remote(manager, server.store)
    assert deployed(server.store) == set(FLEET)
    assert ready_of(server.store)["reason"] != "DeletionHeld"


# (clusters relabelled away from env=prod, the deletion guard, clusters left deployed)
DELETION_CASES: list[tuple[str, int, dict[str, Any] | None, int]] = [
    ("a-few-deletions-proceed", 3, None, 5),
    ("more-than-half-and-more-than-five-are-held", 6, None, 8),
    ("disabled-guard-deletes", 6, {"enabled": False}, 2),
    ("stricter-guard-holds-fewer", 2, {"maxDeletions": 1, "maxDeletionsPercent": 10}, 8),
]


@pytest.mark.parametrize(
    ("untargeted", "guard", "left"),
    [c[1:] for c in DELETION_CASES],
    ids=[c[0] for c in DELETION_CASES],
)
def test_deletion_guard_thresholds(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
    untargeted: int,
    guard: dict[str, Any] | None,
    left: int,
) -> None:
    strategy = {} if guard is None else {"deletionGuard": guard}
    clusters = [
        cluster(n, {"env": "dev" if i < untargeted else "prod"}) for i, n in enumerate(FLEET)
    ]
    create_world(admin, world(*clusters, bundle(ALL, rolloutStrategy=strategy)))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    admin.patch(BUNDLE, "app", {"spec": {"targets": PROD}}, WS)
    settle_remote(manager, server.store)
    assert len(deployed(server.store)) == left


def test_deleting_the_bundle_is_not_guarded(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
) -> None:
    create_world(admin, world(*(cluster(n, {"env": "prod"}) for n in FLEET), bundle(PROD)))
    manager = start_manager(remote)
    settle_remote(manager, server.store)
    admin.delete(BUNDLE, "app", WS)
    settle_remote(manager, server.store)
    assert deployed(server.store) == set()


def values_of(store: Any, name: str) -> Any:
    return deployment_of(store, name)["spec"]["options"]["helm"].get("values")


def start_failing_rollout(
    api: ApiServer, user: KubeStore, manager_store: KubeStore, start: StartManager, on_failure: Any
) -> Any:
    """Four clusters Ready on the first options; then v=2 rolls out two at a time."""
    strategy = {"maxUnavailable": 2, "onFailure": on_failure}
    create_world(
        user, world(*(cluster(n) for n in FLEET[:4]), bundle(ALL, rolloutStrategy=strategy))
    )
    # Never offline: an offline cluster is not failed by the progress deadline.
    manager = start(manager_store, offline_after=3600.0)
    settle_remote(manager, api.store)
    for name in FLEET[:4]:
        report(user, name)
    settle_remote(manager, api.store)
    user.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle_remote(manager, api.store)
    return manager


def test_failing_rollout_halts_and_resumes_on_annotation(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
) -> None:
    on_failure = {"maxFailures": 1, "action": "Halt"}
    manager = start_failing_rollout(server, admin, remote, start_manager, on_failure)
    first = [n for n in FLEET[:4] if values_of(server.store, n) == {"v": 2}]
    assert first == ["c0", "c1"]
    for name in first:
        report(admin, name, applied=False, deployed_error="image pull failed")
    settle_remote(manager, server.store)
    ready = ready_of(server.store)
    assert (ready["status"], ready["reason"]) == ("False", "RolloutHalted")
    assert "2 clusters failed the rollout, maxFailures is 1" in ready["message"]
    assert f"{WS}/c0: ApplyFailed: image pull failed" in ready["message"]
    # Halted: the failed clusters keep the failing deployment, nothing more is promoted.
    assert [values_of(server.store, n) for n in FLEET[:4]] == [{"v": 2}, {"v": 2}, None, None]
    for name in first:
        report(admin, name)
    generation = server.store.get(BUNDLE, "app", WS)["metadata"]["generation"]
    resume = {"bundler.dev/resume-rollout": str(generation)}
    admin.patch(BUNDLE, "app", {"metadata": {"annotations": resume}}, WS)
    settle_remote(manager, server.store)
    assert [values_of(server.store, n) for n in FLEET[:4]] == [{"v": 2}] * 4


def test_failing_rollout_rolls_back_to_the_last_ready_options(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
) -> None:
    on_failure = {"maxFailures": 1, "action": "Rollback"}
    manager = start_failing_rollout(server, admin, remote, start_manager, on_failure)
    before = deployment_of(server.store, "c2")["spec"]
    for name in ("c0", "c1"):
        report(admin, name, applied=False, deployed_error="image pull failed")
    settle_remote(manager, server.store)
    ready = ready_of(server.store)
    assert (ready["status"], ready["reason"]) == ("False", "RolledBack")
    for name in ("c0", "c1"):
        spec = deployment_of(server.store, name)["spec"]
        assert (spec["options"], spec["deploymentID"]) == (
            before["options"],
            before["deploymentID"],
        )
        assert spec["stagedOptions"]["helm"]["values"] == {"v": 2}
        assert spec["rolledBackFrom"] == spec["stagedDeploymentID"]
        report(admin, name)
    settle_remote(manager, server.store)
    # Back on the last Ready options, the rollout stays halted until a new generation.
    assert ready_of(server.store)["reason"] == "RolledBack"
    assert [values_of(server.store, n) for n in FLEET[:4]] == [None] * 4
    admin.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 3}}}}, WS)
    settle_remote(manager, server.store)
    assert [values_of(server.store, n) for n in FLEET[:4]] == [{"v": 3}] * 2 + [None] * 2


def test_not_ready_past_the_progress_deadline_halts(
    server: ApiServer,  # noqa: F811
    admin: KubeStore,  # noqa: F811
    remote: KubeStore,  # noqa: F811
    start_manager: StartManager,
    clock: ManualClock,
) -> None:
    on_failure = {"progressDeadline": "10m"}
    manager = start_failing_rollout(server, admin, remote, start_manager, on_failure)
    report(admin, "c0", ready=False, ready_reason="Progressing")
    report(admin, "c1")
    settle_remote(manager, server.store)
    assert ready_of(server.store)["reason"] != "RolloutHalted"
    clock.advance(601.0)
    settle_remote(manager, server.store)
    ready = ready_of(server.store)
    assert (ready["status"], ready["reason"]) == ("False", "RolloutHalted")
    assert f"{WS}/c0: not Ready within progressDeadline: Progressing" in ready["message"]
    # c1 was Ready in time, so c2 took its place in the budget before the deadline passed.
    assert [values_of(server.store, n) for n in FLEET[:4]] == [{"v": 2}] * 3 + [None]
