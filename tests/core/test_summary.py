from __future__ import annotations

import random
from typing import Any

import pytest

from bundler.api.bundle import BundleStatus
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentStatus
from bundler.api.meta import Condition, ConditionStatus
from bundler.api.summary import DeploymentState as S
from bundler.api.summary import DisplayState as D
from bundler.api.summary import NonReadyStatus
from bundler.core.planning import BundlePlan, ClusterError
from bundler.core.state import conditions_equal_ignoring_time
from bundler.core.summary import (
    GroupMember,
    GroupTally,
    PausedBy,
    Placement,
    Tally,
    bundle_status,
    cluster_group_status,
    cluster_status,
    group_member,
    placements_from_plan,
    with_ready,
)
from tests.support.builders import APPLY_FAILED, UPGRADE_FAILED, deployment

NOW = "2024-05-01T12:00:00Z"
BUNDLE = "fleet-default/app"
TEMPLATE_ERROR = "fleet-default/app: cluster fleet-default/c: values.region: 'region' is undefined"

# One BundleDeployment per state (Pending and Offline come from the placement, not the object).
BD: dict[S, BundleDeployment | None] = {
    S.READY: deployment(),
    S.NOT_READY: deployment(ready=False, conditions=[UPGRADE_FAILED]),
    S.ERR_APPLIED: deployment(applied="v1", conditions=[APPLY_FAILED]),
    S.WAIT_APPLIED: deployment(applied="v1"),
    S.OUT_OF_SYNC: deployment(staged="v3"),
    S.MODIFIED: deployment(non_modified=False),
    S.PENDING: None,
    S.OFFLINE: deployment(),
}


def on(cluster: str, state: S, *, bundle: str = BUNDLE, error: str | None = None) -> Placement:
    return Placement(bundle, cluster, BD[state], offline=state is S.OFFLINE, error=error)


def status_of(placements: list[Placement], previous: list[Condition] | None = None) -> BundleStatus:
    return bundle_status(
        placements,
        observed_generation=4,
        resolved_version="6.1.2",
        previous=previous or [],
        now=NOW,
    )


def summary(**counts: int) -> dict[str, int]:
    fields = [
        "ready",
        "notReady",
        "pending",
        "waitApplied",
        "errApplied",
        "outOfSync",
        "modified",
        "offline",
    ]
    return {"desiredReady": sum(counts.values()), **{f: counts.get(f, 0) for f in fields}}


EVERY_STATE = [on(f"fleet-default/c{i}", state) for i, state in enumerate(reversed(list(S)))]

# (placements, summary, readyClusters, display state, nonReady (cluster, state, message),
#  Ready condition (status, reason, message))
BUNDLE_CASES: list[
    tuple[
        str,
        list[Placement],
        dict[str, int],
        str,
        S | D,
        list[tuple[str, S, str]],
        tuple[str, str, str],
    ]
] = [
    (
        "no-targets",
        [],
        summary(),
        "0/0",
        D.NO_TARGETS,
        [],
        ("False", "NoTargets", "no cluster is targeted, nothing is deployed: check spec.targets"),
    ),
    (
        "all-ready",
        [on("fleet-default/a", S.READY), on("fleet-default/b", S.READY)],
        summary(ready=2),
        "2/2",
        S.READY,
        [],
        ("True", "Ready", "all 2 clusters ready"),
    ),
    (
        "one-not-ready",
        [
            on("fleet-default/a", S.READY),
            on("fleet-default/b", S.NOT_READY),
            on("fleet-default/c", S.READY),
        ],
        summary(ready=2, notReady=1),
        "2/3",
        S.NOT_READY,
        [("fleet-default/b", S.NOT_READY, "UpgradeFailed: Helm upgrade failed: timed out")],
        (
            "False",
            "NotReady",
            "1 of 3 clusters not ready: NotReady(1); "
            "fleet-default/b: UpgradeFailed: Helm upgrade failed: timed out",
        ),
    ),
    (
        "every-state",
        EVERY_STATE,
        summary(
            ready=1,
            notReady=1,
            pending=1,
            waitApplied=1,
            errApplied=1,
            outOfSync=1,
            modified=1,
            offline=1,
        ),
        "1/8",
        S.ERR_APPLIED,
        [
            ("fleet-default/c7", S.ERR_APPLIED, "ApplyFailed: namespace podinfo is forbidden"),
            ("fleet-default/c6", S.WAIT_APPLIED, "waiting for the agent to apply the deployment"),
            ("fleet-default/c5", S.OFFLINE, "the cluster's agent has not checked in recently"),
            ("fleet-default/c4", S.NOT_READY, "UpgradeFailed: Helm upgrade failed: timed out"),
            ("fleet-default/c3", S.PENDING, "the BundleDeployment is not created yet"),
            (
                "fleet-default/c2",
                S.OUT_OF_SYNC,
                "a newer deployment is staged, held back by the rollout strategy",
            ),
            ("fleet-default/c1", S.MODIFIED, "the release was modified on the cluster"),
        ],
        (
            "False",
            "ErrApplied",
            "7 of 8 clusters not ready: ErrApplied(1), WaitApplied(1), Offline(1), NotReady(1), "
            "Pending(1), OutOfSync(1), Modified(1); "
            "fleet-default/c7: ApplyFailed: namespace podinfo is forbidden",
        ),
    ),
    (
        "template-error-without-deployment",
        [on("fleet-default/a", S.READY), on("fleet-default/c", S.PENDING, error=TEMPLATE_ERROR)],
        summary(ready=1, errApplied=1),
        "1/2",
        S.ERR_APPLIED,
        [("fleet-default/c", S.ERR_APPLIED, TEMPLATE_ERROR)],
        (
            "False",
            "ErrApplied",
            f"1 of 2 clusters not ready: ErrApplied(1); template errors on 1 of them; "
            f"fleet-default/c: {TEMPLATE_ERROR}",
        ),
    ),
    (
        "template-error-on-a-cluster-still-running-ready",
        [on("fleet-default/c", S.READY, error=TEMPLATE_ERROR)],
        summary(errApplied=1),
        "0/1",
        S.ERR_APPLIED,
        [("fleet-default/c", S.ERR_APPLIED, TEMPLATE_ERROR)],
        (
            "False",
            "ErrApplied",
            f"1 of 1 clusters not ready: ErrApplied(1); template errors on 1 of them; "
            f"fleet-default/c: {TEMPLATE_ERROR}",
        ),
    ),
]


@pytest.mark.parametrize(
    ("placements", "counts", "ratio", "state", "non_ready", "ready"),
    [c[1:] for c in BUNDLE_CASES],
    ids=[c[0] for c in BUNDLE_CASES],
)
def test_bundle_status(
    placements: list[Placement],
    counts: dict[str, int],
    ratio: str,
    state: S | D,
    non_ready: list[tuple[str, S, str]],
    ready: tuple[str, str, str],
) -> None:
    status = status_of(placements)
    assert status.summary is not None and status.summary.model_dump() == counts
    assert status.display is not None
    assert (status.display.readyClusters, status.display.state) == (ratio, state)
    assert [(r.cluster, r.state, r.message) for r in status.nonReady] == non_ready
    [condition] = status.conditions
    assert (condition.type, condition.status.value, condition.reason, condition.message) == (
        "Ready",
        *ready,
    )
    assert (status.observedGeneration, status.resolvedVersion) == (4, "6.1.2")


def test_bundle_lists_ten_worst_first_then_by_cluster() -> None:
    states = [S.MODIFIED, S.NOT_READY, S.ERR_APPLIED, S.PENDING] * 3 + [S.READY]
    placements = [on(f"fleet-default/c{i:02}", s) for i, s in enumerate(states)]
    status = status_of(placements)
    assert [(r.state, r.cluster) for r in status.nonReady] == [
        (S.ERR_APPLIED, "fleet-default/c02"),
        (S.ERR_APPLIED, "fleet-default/c06"),
        (S.ERR_APPLIED, "fleet-default/c10"),
        (S.NOT_READY, "fleet-default/c01"),
        (S.NOT_READY, "fleet-default/c05"),
        (S.NOT_READY, "fleet-default/c09"),
        (S.PENDING, "fleet-default/c03"),
        (S.PENDING, "fleet-default/c07"),
        (S.PENDING, "fleet-default/c11"),
        (S.MODIFIED, "fleet-default/c00"),
    ]
    assert status.summary is not None and status.summary.desiredReady == 13
    assert status.conditions[0].message.startswith("12 of 13 clusters not ready")


def test_bundle_status_is_deterministic_and_keeps_transition_time() -> None:
    first = status_of(EVERY_STATE)
    again = status_of(list(reversed(EVERY_STATE)), previous=first.conditions)
    assert again == first
    later = bundle_status(
        EVERY_STATE,
        observed_generation=4,
        resolved_version="6.1.2",
        previous=first.conditions,
        now="later",
    )
    assert later == first
    healed = bundle_status(
        [on("fleet-default/a", S.READY)],
        observed_generation=4,
        resolved_version="6.1.2",
        previous=first.conditions,
        now="later",
    )
    assert healed.conditions[0].lastTransitionTime == "later"


def test_placements_from_plan_marks_errors_missing_and_offline() -> None:
    plan = BundlePlan(
        BUNDLE,
        errors=(ClusterError(BUNDLE, "fleet-default/b", TEMPLATE_ERROR),),
        targeted=("fleet-default/a", "fleet-default/b", "fleet-default/c"),
    )
    ready = deployment()
    placements = placements_from_plan(plan, {"fleet-default/a": ready}, {"fleet-default/a"})
    assert placements == (
        Placement(BUNDLE, "fleet-default/a", ready, offline=True),
        Placement(BUNDLE, "fleet-default/b", None, error=TEMPLATE_ERROR),
        Placement(BUNDLE, "fleet-default/c", None),
    )
    assert [p.state for p in placements] == [S.OFFLINE, S.ERR_APPLIED, S.PENDING]


AGENT = AgentStatus(lastSeen=NOW, version="0.1.0")

CLUSTER_CASES: list[
    tuple[str, list[Placement], str, S | D, list[tuple[str, S]], tuple[str, str, str]]
] = [
    ("no-bundles", [], "0/0", D.READY, [], ("True", "Ready", "no bundles")),
    (
        "all-ready",
        [on("c", S.READY, bundle="ws/a"), on("c", S.READY, bundle="ws/b")],
        "2/2",
        S.READY,
        [],
        ("True", "Ready", "all 2 bundles ready"),
    ),
    (
        "mixed",
        [
            on("c", S.READY, bundle="ws/a"),
            on("c", S.MODIFIED, bundle="ws/b"),
            on("c", S.WAIT_APPLIED, bundle="ws/c"),
            on("c", S.PENDING, bundle="ws/d"),
        ],
        "1/4",
        S.WAIT_APPLIED,
        [("ws/c", S.WAIT_APPLIED), ("ws/d", S.PENDING), ("ws/b", S.MODIFIED)],
        (
            "False",
            "WaitApplied",
            "3 of 4 bundles not ready: WaitApplied(1), Pending(1), Modified(1); "
            "ws/c: waiting for the agent to apply the deployment",
        ),
    ),
    (
        "offline",
        [on("c", S.OFFLINE, bundle="ws/a"), on("c", S.OFFLINE, bundle="ws/b")],
        "0/2",
        S.OFFLINE,
        [("ws/a", S.OFFLINE), ("ws/b", S.OFFLINE)],
        (
            "False",
            "Offline",
            "2 of 2 bundles not ready: Offline(2); "
            "ws/a: the cluster's agent has not checked in recently",
        ),
    ),
]


@pytest.mark.parametrize(
    ("placements", "ratio", "state", "non_ready", "ready"),
    [c[1:] for c in CLUSTER_CASES],
    ids=[c[0] for c in CLUSTER_CASES],
)
def test_cluster_status(
    placements: list[Placement],
    ratio: str,
    state: S | D,
    non_ready: list[tuple[str, S]],
    ready: tuple[str, str, str],
) -> None:
    imported = Condition(type="Imported", status=ConditionStatus.TRUE, lastTransitionTime="t0")
    status = cluster_status(
        placements, namespace="cluster-ns", agent=AGENT, previous=[imported], now=NOW
    )
    assert (status.namespace, status.agent) == ("cluster-ns", AGENT)
    assert status.summary is not None and status.summary.desiredReady == len(placements)
    assert status.display is not None
    assert (status.display.readyBundles, status.display.state) == (ratio, state)
    assert [(b.bundle, b.state) for b in status.nonReadyBundles] == non_ready
    assert status.conditions[0] == imported
    condition = status.conditions[1]
    assert (condition.type, condition.status.value, condition.reason, condition.message) == (
        "Ready",
        *ready,
    )


def test_cluster_lists_at_most_ten_bundles() -> None:
    placements = [on("c", S.NOT_READY, bundle=f"ws/b{i:02}") for i in range(12)]
    status = cluster_status(placements, namespace=None, agent=None, previous=[], now=NOW)
    assert [b.bundle for b in status.nonReadyBundles] == [f"ws/b{i:02}" for i in range(10)]
    assert status.summary is not None and status.summary.notReady == 12


GROUP_MEMBERS = ["ws/a", "ws/b", "ws/c", "ws/d"]
GROUP_PLACEMENTS = [
    on("ws/a", S.READY, bundle="ws/x"),
    on("ws/a", S.READY, bundle="ws/y"),
    on("ws/b", S.READY, bundle="ws/x"),
    on("ws/b", S.NOT_READY, bundle="ws/y"),
    on("ws/d", S.OUT_OF_SYNC, bundle="ws/x"),
    on("ws/d", S.ERR_APPLIED, bundle="ws/y"),
    on("ws/not-a-member", S.ERR_APPLIED, bundle="ws/x"),
]


def test_cluster_group_status() -> None:
    status = cluster_group_status(GROUP_MEMBERS, GROUP_PLACEMENTS, previous=[], now=NOW)
    assert (status.clusterCount, status.nonReadyClusterCount) == (4, 2)
    assert status.nonReadyClusters == ["ws/d", "ws/b"]
    assert status.summary is not None
    assert status.summary.model_dump() == summary(ready=3, notReady=1, outOfSync=1, errApplied=1)
    assert status.display is not None
    assert (status.display.readyClusters, status.display.state) == ("2/4", D.ERR_APPLIED)
    [condition] = status.conditions
    assert (condition.status, condition.reason) == (ConditionStatus.FALSE, "ErrApplied")
    assert condition.message == (
        "2 of 4 clusters not ready: ErrApplied(1), NotReady(1); "
        "ws/d: ws/y: ApplyFailed: namespace podinfo is forbidden"
    )


GROUP_CASES: list[tuple[str, list[str], list[Placement], dict[str, Any]]] = [
    (
        "empty-group",
        [],
        [],
        {"clusterCount": 0, "readyClusters": "0/0", "state": D.READY, "message": "no clusters"},
    ),
    (
        "clusters-without-bundles-are-ready",
        ["ws/a", "ws/b"],
        [],
        {
            "clusterCount": 2,
            "readyClusters": "2/2",
            "state": D.READY,
            "message": "all 2 clusters ready",
        },
    ),
    (
        "pending-cluster-is-not-ready",
        ["ws/a"],
        [on("ws/a", S.PENDING, bundle="ws/x")],
        {
            "clusterCount": 1,
            "readyClusters": "0/1",
            "state": S.PENDING,
            "message": "1 of 1 clusters not ready: Pending(1); "
            "ws/a: ws/x: the BundleDeployment is not created yet",
        },
    ),
]


@pytest.mark.parametrize(
    ("members", "placements", "expected"),
    [c[1:] for c in GROUP_CASES],
    ids=[c[0] for c in GROUP_CASES],
)
def test_cluster_group_edges(
    members: list[str], placements: list[Placement], expected: dict[str, Any]
) -> None:
    status = cluster_group_status(members, placements, previous=[], now=NOW)
    assert status.display is not None
    assert {
        "clusterCount": status.clusterCount,
        "readyClusters": status.display.readyClusters,
        "state": status.display.state,
        "message": status.conditions[0].message,
    } == expected


def test_cluster_group_lists_ten_worst_first() -> None:
    members = [f"ws/c{i:02}" for i in range(12)]
    placements = [
        on(m, S.MODIFIED if i % 2 else S.WAIT_APPLIED, bundle="ws/x") for i, m in enumerate(members)
    ]
    status = cluster_group_status(members, placements, previous=[], now=NOW)
    assert status.nonReadyClusterCount == 12
    assert status.nonReadyClusters == [f"ws/c{i:02}" for i in (0, 2, 4, 6, 8, 10, 1, 3, 5, 7)]


def test_group_recompute_equal_ignoring_time() -> None:
    first = cluster_group_status(GROUP_MEMBERS, GROUP_PLACEMENTS, previous=[], now="t1")
    second = cluster_group_status(GROUP_MEMBERS, GROUP_PLACEMENTS, previous=[], now="t2")
    assert first != second
    assert conditions_equal_ignoring_time(first.conditions, second.conditions)
    assert (
        cluster_group_status(GROUP_MEMBERS, GROUP_PLACEMENTS, previous=first.conditions, now="t2")
        == first
    )


WAITING = {
    "type": "Deployed",
    "status": "Unknown",
    "reason": "DependencyNotReady",
    "message": "waiting for bundle cert-manager to be Ready on this cluster (dependsOn)",
}
STALE_FAILURE = {**APPLY_FAILED, "observedGeneration": 1}


@pytest.mark.parametrize(
    ("bd", "message"),
    [
        (
            deployment(applied="v1", conditions=[WAITING]),
            "DependencyNotReady: waiting for bundle cert-manager to be Ready on this cluster "
            "(dependsOn)",
        ),
        (deployment(applied="v1"), "waiting for the agent to apply the deployment"),
        (
            deployment(applied="v1", conditions=[STALE_FAILURE], generation=2),
            "waiting for the agent to apply the deployment",
        ),
    ],
    ids=["waiting-on-depends-on", "not-seen-yet", "stale-failure"],
)
def test_a_deployment_waiting_for_depends_on_is_reported_with_the_agents_reason(
    bd: BundleDeployment, message: str
) -> None:
    placement = Placement(BUNDLE, "fleet-default/c", bd)
    assert placement.state is S.WAIT_APPLIED
    (listed,) = status_of([placement]).nonReady
    assert listed.message == message


def test_a_tally_changed_placement_by_placement_equals_the_roll_up_from_scratch() -> None:
    states = [S.READY, S.NOT_READY, S.ERR_APPLIED, S.WAIT_APPLIED, S.OFFLINE, S.PENDING]
    tally = Tally()
    for n, state in enumerate(states):
        tally.put(on(f"fleet-default/c{n}", state))
    # One cluster recovers, one gets a template error, one is no longer targeted.
    tally.put(on("fleet-default/c1", S.READY))
    tally.put(on("fleet-default/c3", S.ERR_APPLIED, error=TEMPLATE_ERROR))
    tally.remove("fleet-default/c5")
    after = [
        on("fleet-default/c0", S.READY),
        on("fleet-default/c1", S.READY),
        on("fleet-default/c2", S.ERR_APPLIED),
        on("fleet-default/c3", S.ERR_APPLIED, error=TEMPLATE_ERROR),
        on("fleet-default/c4", S.OFFLINE),
    ]
    kept = tally.bundle_status(
        observed_generation=4, resolved_version="6.1.2", previous=[], now=NOW
    )
    assert kept == status_of(after)
    assert kept.summary is not None
    assert kept.summary.desiredReady == 5


CHANGED_TO = [S.READY, S.NOT_READY, S.ERR_APPLIED, S.WAIT_APPLIED, S.OFFLINE, S.PENDING]


def random_changes(seed: int) -> list[tuple[str, S | None]]:
    """200 changes to 30 clusters: a cluster and its new state, or None where it is removed."""
    pick = random.Random(seed)
    clusters = [f"fleet-default/c{n:02}" for n in range(30)]
    return [
        (pick.choice(clusters), None if pick.random() < 0.1 else pick.choice(CHANGED_TO))
        for _ in range(200)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_tally_read_after_every_change_lists_what_a_roll_up_from_scratch_does(seed: int) -> None:
    # Its not-ready listing is kept between reads while no change could enter or leave it.
    changes = random_changes(seed)
    assert changes
    tally = Tally()
    now: dict[str, Placement] = {}
    for cluster, state in changes:
        if state is None:
            tally.remove(cluster)
            now.pop(cluster, None)
        else:
            now[cluster] = on(cluster, state)
            tally.put(now[cluster])
        read = tally.bundle_status(
            observed_generation=4, resolved_version="6.1.2", previous=[], now=NOW
        )
        assert read == status_of([now[c] for c in sorted(now)])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_group_tally_changed_member_by_member_equals_one_counted_from_scratch(seed: int) -> None:
    changes = random_changes(seed)
    assert changes
    kept = GroupTally()
    now: dict[str, GroupMember] = {}
    for step, (cluster, state) in enumerate(changes):
        if state is None:
            kept.remove(cluster)
            now.pop(cluster, None)
        else:
            placed = [on(cluster, state, bundle=f"b{n}") for n in range(3)]
            now[cluster] = group_member(cluster, placed)
            kept.put(now[cluster])
        fresh = GroupTally()
        for member in now.values():
            fresh.put(member)
        read = kept.group_status(previous=[], now=NOW)
        assert read == fresh.group_status(previous=[], now=NOW), f"step {step}"
    assert kept.clusters() == set(now)


PAUSED_BUNDLE = (
    "Paused: the Bundle is paused (spec.paused): its new deployment is staged, not promoted"
)
PAUSED_CLUSTER = "Paused: the Cluster is paused (spec.paused): no BundleDeployment is created"
BUNDLE_PAUSE = "the Bundle is paused (spec.paused): changes are staged, not promoted"


def paused(cluster: str, state: S, by: PausedBy) -> Placement:
    return Placement(BUNDLE, cluster, BD[state], paused=by)


# (placements, bundle paused, display state, first nonReady message, Ready (status, message))
PAUSE_CASES: list[tuple[str, list[Placement], bool, D, str | None, tuple[str, str]]] = [
    (
        "bundle-paused-with-a-change-staged",
        [paused("ws/a", S.READY, PausedBy.BUNDLE), paused("ws/b", S.OUT_OF_SYNC, PausedBy.BUNDLE)],
        True,
        D.PAUSED,
        PAUSED_BUNDLE,
        ("False", f"1 of 2 clusters not ready: OutOfSync(1); ws/b: {PAUSED_BUNDLE}"),
    ),
    (
        "bundle-paused-everything-ready",
        [paused("ws/a", S.READY, PausedBy.BUNDLE)],
        True,
        D.PAUSED,
        None,
        ("True", f"all 1 clusters ready; {BUNDLE_PAUSE}"),
    ),
    (
        "cluster-paused-nothing-created",
        [paused("ws/a", S.READY, PausedBy.CLUSTER), paused("ws/b", S.PENDING, PausedBy.CLUSTER)],
        False,
        D.PAUSED,
        PAUSED_CLUSTER,
        ("False", f"1 of 2 clusters not ready: Pending(1); ws/b: {PAUSED_CLUSTER}"),
    ),
    (
        "a-failure-is-worse-than-the-pause",
        [
            paused("ws/a", S.ERR_APPLIED, PausedBy.CLUSTER),
            paused("ws/b", S.OUT_OF_SYNC, PausedBy.CLUSTER),
        ],
        False,
        D.ERR_APPLIED,
        "ApplyFailed: namespace podinfo is forbidden",
        (
            "False",
            "2 of 2 clusters not ready: ErrApplied(1), OutOfSync(1); "
            "ws/a: ApplyFailed: namespace podinfo is forbidden",
        ),
    ),
]


@pytest.mark.parametrize(
    ("placements", "bundle_paused", "state", "first", "ready"),
    [c[1:] for c in PAUSE_CASES],
    ids=[c[0] for c in PAUSE_CASES],
)
def test_a_paused_bundle_or_cluster_says_paused_not_held_by_the_rollout(
    placements: list[Placement],
    bundle_paused: bool,
    state: D,
    first: str | None,
    ready: tuple[str, str],
) -> None:
    status = bundle_status(
        placements,
        observed_generation=1,
        resolved_version=None,
        previous=[],
        now=NOW,
        paused=bundle_paused,
    )
    assert status.display is not None and status.display.state is state
    assert (status.nonReady[0].message if status.nonReady else None) == first
    condition = status.conditions[0]
    assert (condition.status.value, condition.message) == ready
    assert condition.reason == state.value  # the STATE column is the Ready reason


@pytest.mark.parametrize(
    ("reason", "state"),
    [
        ("InvalidSpec", D.INVALID_SPEC),
        ("DeletionHeld", D.DELETION_HELD),
        ("ControlPlaneNotInitialized", D.CONTROL_PLANE_NOT_INITIALIZED),
        ("SomeGateNobodyKnows", D.NOT_READY),
    ],
    ids=["invalid-spec", "deletion-held", "gated", "unknown-reason"],
)
def test_what_holds_the_whole_bundle_back_is_its_state_too(reason: str, state: D) -> None:
    rolled_up = status_of([on("ws/a", S.READY)])
    assert rolled_up.display is not None and rolled_up.display.state is D.READY
    earlier = Condition(
        type="Ready", status=ConditionStatus.FALSE, reason=reason, lastTransitionTime="t0"
    )
    held = with_ready(rolled_up, reason, "why", NOW, [earlier])
    assert held.display is not None
    assert (held.display.readyClusters, held.display.state) == ("1/1", state)
    [ready] = held.conditions
    assert (ready.status, ready.reason, ready.message) == (ConditionStatus.FALSE, reason, "why")
    assert ready.lastTransitionTime == "t0"  # False before, False now


def test_the_version_column_shows_an_exact_version_too() -> None:
    exact = bundle_status([], observed_generation=1, resolved_version=None, previous=[], now=NOW,
                          version="6.7.1")  # fmt: skip
    assert exact.display is not None and exact.display.version == "6.7.1"
    assert exact.resolvedVersion is None
    ranged = status_of([])
    assert ranged.display is not None and ranged.display.version == "6.1.2"


def test_the_objects_flux_reports_not_ready_reach_the_bundle_and_the_cluster() -> None:
    failed = BD[S.NOT_READY]
    assert failed is not None and failed.status is not None
    web = NonReadyStatus(kind="Deployment", namespace="apps", name="web", status="InProgress",
                         message="x" * 5000)  # fmt: skip
    status = failed.status.model_copy(update={"nonReadyStatus": [web]})
    placement = Placement(BUNDLE, "ws/a", failed.model_copy(update={"status": status}))
    (listed,) = status_of([placement]).nonReady
    (shown,) = listed.nonReadyStatus
    assert (shown.kind, shown.namespace, shown.name, shown.status) == (
        "Deployment", "apps", "web", "InProgress"
    )  # fmt: skip
    assert len(shown.message) == 1024  # an agent's text is bounded when rolled up
    on_cluster = cluster_status([placement], namespace=None, agent=None, previous=[], now=NOW)
    assert on_cluster.nonReadyBundles[0].nonReadyStatus == [shown]
