from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundle import RolloutStrategy
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.meta import IntOrPercent
from bundler.core.rollout import (
    RolloutDecision,
    RolloutTarget,
    decided_alone,
    plan_rollout,
    resolve_int_or_percent,
    split_partitions,
)
from tests.support.builders import cluster, deployment, group

NEW = "v2"

# What a cluster currently runs, by short name.
RUNS: dict[str, BundleDeployment | None] = {
    "none": None,
    "ready-v1": deployment("v1", "v1"),
    "broken-v1": deployment("v1", "v1", ready=False),
    "applying-v2": deployment("v2", "v1"),
    "broken-v2": deployment("v2", "v2", ready=False),
    "ready-v2": deployment("v2", "v2"),
    "ready-v2-staged-v3": deployment("v2", "v2", staged="v3"),
}

PROMOTE, STAGE, CREATE, KEEP = "promote", "stage", "create", "keep"


def target(
    name: str, runs: str, labels: dict[str, str] | None = None, **spec: Any
) -> RolloutTarget:
    return RolloutTarget(cluster(name, labels, **spec), NEW, RUNS[runs])


def outcome(decision: RolloutDecision) -> str:
    if decision.create:
        return CREATE
    if decision.promote:
        return PROMOTE
    return STAGE if decision.stage else KEEP


def rollout(
    targets: list[RolloutTarget],
    strategy: dict[str, Any] | None = None,
    *,
    bundle_paused: bool = False,
    groups: list[Any] | None = None,
) -> list[str]:
    parsed = None if strategy is None else RolloutStrategy.model_validate(strategy)
    decisions = plan_rollout(parsed, targets, groups or [], bundle_paused=bundle_paused).decisions
    assert [d.cluster for d in decisions] == [t.key for t in targets]
    return [outcome(d) for d in decisions]


RESOLVE_CASES: list[tuple[str, IntOrPercent | None, int, IntOrPercent, int]] = [
    ("ten-percent-of-five-is-one-minimum", "10%", 5, "100%", 1),
    ("rounds-down", "50%", 5, "100%", 2),
    ("hundred-percent", "100%", 5, "100%", 5),
    ("zero-percent-is-one-minimum", "0%", 5, "100%", 1),
    ("number-as-is", 3, 5, "100%", 3),
    ("zero-number-as-is", 0, 5, "100%", 0),
    ("number-above-total-as-is", 9, 5, "100%", 9),
    ("default-percent", None, 200, "25%", 50),
    ("default-number", None, 7, 0, 0),
]


@pytest.mark.parametrize(
    ("value", "total", "default", "expected"),
    [c[1:] for c in RESOLVE_CASES],
    ids=[c[0] for c in RESOLVE_CASES],
)
def test_resolve_int_or_percent(
    value: IntOrPercent | None, total: int, default: IntOrPercent, expected: int
) -> None:
    assert resolve_int_or_percent(value, total, default) == expected


# (what each cluster runs, strategy, expected outcome per cluster)
ROLLOUT_CASES: list[tuple[str, list[str], dict[str, Any] | None, list[str]]] = [
    ("no-strategy-promotes-all", ["ready-v1"] * 5, None, [PROMOTE] * 5),
    ("up-to-date-is-kept", ["ready-v2", "broken-v2", "applying-v2"], None, [KEEP] * 3),
    (
        "max-unavailable-1-first-pass",
        ["ready-v1"] * 3,
        {"maxUnavailable": 1},
        [PROMOTE, STAGE, STAGE],
    ),
    (
        "max-unavailable-1-while-first-applies",
        ["applying-v2", "ready-v1", "ready-v1"],
        {"maxUnavailable": 1},
        [KEEP, STAGE, STAGE],
    ),
    (
        "max-unavailable-1-while-first-is-not-ready",
        ["broken-v2", "ready-v1", "ready-v1"],
        {"maxUnavailable": 1},
        [KEEP, STAGE, STAGE],
    ),
    (
        "max-unavailable-1-after-first-is-ready",
        ["ready-v2", "ready-v1", "ready-v1"],
        {"maxUnavailable": 1},
        [KEEP, PROMOTE, STAGE],
    ),
    (
        "percent-rounds-down-min-one",
        ["ready-v1"] * 5,
        {"maxUnavailable": "10%"},
        [PROMOTE] + [STAGE] * 4,
    ),
    (
        "percent-rounds-down",
        ["ready-v1"] * 5,
        {"maxUnavailable": "50%"},
        [PROMOTE] * 2 + [STAGE] * 3,
    ),
    (
        "already-unavailable-is-promoted-beyond-budget",
        ["broken-v1", "broken-v1", "ready-v1"],
        {"maxUnavailable": 1},
        [PROMOTE, PROMOTE, STAGE],
    ),
    (
        "staged-withdrawn-when-current-is-desired",
        ["ready-v2-staged-v3"],
        {"maxUnavailable": 1},
        [PROMOTE],
    ),
    ("new-clusters-are-created", ["none", "none"], None, [CREATE, CREATE]),
    (
        "creations-count-as-unavailable",
        ["none", "none", "ready-v1", "ready-v1"],
        {"maxUnavailable": 2},
        [CREATE, CREATE, STAGE, STAGE],
    ),
    (
        "creations-ignore-max-unavailable",
        ["ready-v1", "none", "none"],
        {"maxUnavailable": 1},
        [PROMOTE, CREATE, CREATE],
    ),
    (
        "max-new-limits-creations",
        ["none"] * 4 + ["ready-v1"],
        {"maxNew": 2},
        [CREATE] * 2 + [KEEP] * 2 + [PROMOTE],
    ),
]


@pytest.mark.parametrize(
    ("runs", "strategy", "expected"),
    [c[1:] for c in ROLLOUT_CASES],
    ids=[c[0] for c in ROLLOUT_CASES],
)
def test_rollout(runs: list[str], strategy: dict[str, Any] | None, expected: list[str]) -> None:
    targets = [target(f"c{i}", r) for i, r in enumerate(runs)]
    assert rollout(targets, strategy) == expected


def test_default_max_new_is_50() -> None:
    outcomes = rollout([target(f"c{i:02}", "none") for i in range(60)])
    assert (outcomes.count(CREATE), outcomes.count(KEEP)) == (50, 10)
    decisions = plan_rollout(
        None, [target(f"c{i:02}", "none") for i in range(51)], [], bundle_paused=False
    ).decisions
    assert decisions[-1].reason == "not created: maxNew 50 reached"


PAUSE_CASES: list[tuple[str, bool, list[tuple[str, bool]], list[str]]] = [
    (
        "paused-bundle-stages-only",
        True,
        [("ready-v1", False), ("broken-v1", False), ("none", False), ("ready-v2", False)],
        [STAGE, STAGE, KEEP, KEEP],
    ),
    (
        "paused-cluster-stages-only",
        False,
        [("ready-v1", True), ("none", True), ("ready-v1", False), ("none", False)],
        [STAGE, KEEP, PROMOTE, CREATE],
    ),
]


@pytest.mark.parametrize(
    ("bundle_paused", "clusters", "expected"),
    [c[1:] for c in PAUSE_CASES],
    ids=[c[0] for c in PAUSE_CASES],
)
def test_paused_stages_but_never_promotes(
    bundle_paused: bool, clusters: list[tuple[str, bool]], expected: list[str]
) -> None:
    targets = [target(f"c{i}", runs, paused=paused) for i, (runs, paused) in enumerate(clusters)]
    assert rollout(targets, bundle_paused=bundle_paused) == expected


def test_paused_reasons() -> None:
    targets = [target("c0", "ready-v1", paused=True), target("c1", "none", paused=True)]
    decisions = plan_rollout(None, targets, [], bundle_paused=False).decisions
    assert [d.reason for d in decisions] == [
        "staged: cluster paused",
        "not created: cluster paused",
    ]


CANARY = {"env": "canary"}
PROD = {"env": "prod"}
GROUPS = [group("eu", {"matchLabels": {"region": "eu"}})]
PARTITIONED = {
    "partitions": [
        {"name": "canary", "clusterSelector": {"matchLabels": CANARY}, "maxUnavailable": 1},
        {"name": "eu", "clusterGroup": "eu"},
    ]
}


def fleet(canary_runs: str, prod_runs: str = "ready-v1") -> list[RolloutTarget]:
    return [
        target("canary-1", canary_runs, CANARY),
        target("canary-2", canary_runs, CANARY),
        target("prod-1", prod_runs, {**PROD, "region": "eu"}),
        target("prod-2", prod_runs, PROD),
    ]


PARTITION_CASES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    (
        "canary-within-budget-lets-later-partitions-go",
        "ready-v1",
        {},
        [PROMOTE, STAGE, PROMOTE, PROMOTE],
    ),
    ("canary-ready-on-new-lets-later-go", "ready-v2", {}, [KEEP, KEEP, PROMOTE, PROMOTE]),
    ("canary-over-budget-makes-later-wait", "broken-v2", {}, [KEEP, KEEP, STAGE, STAGE]),
    (
        "one-unavailable-partition-allowed",
        "broken-v2",
        {"maxUnavailablePartitions": 1},
        [KEEP, KEEP, PROMOTE, PROMOTE],
    ),
    (
        "bundle-budget-still-applies",
        "ready-v1",
        {"maxUnavailable": 2},
        [PROMOTE, STAGE, PROMOTE, STAGE],
    ),
]


@pytest.mark.parametrize(
    ("canary_runs", "extra", "expected"),
    [c[1:] for c in PARTITION_CASES],
    ids=[c[0] for c in PARTITION_CASES],
)
def test_manual_partitions(canary_runs: str, extra: dict[str, Any], expected: list[str]) -> None:
    assert rollout(fleet(canary_runs), {**PARTITIONED, **extra}, groups=GROUPS) == expected


def test_waiting_partition_reason_and_no_creation() -> None:
    targets = [*fleet("broken-v2")[:2], target("prod-new", "none", PROD)]
    decisions = plan_rollout(
        RolloutStrategy.model_validate(PARTITIONED), targets, GROUPS, bundle_paused=False
    ).decisions
    assert not decisions[2].create
    assert decisions[2].reason == (
        "not created: partition 'unmatched' waits: 1 partitions unavailable, "
        "maxUnavailablePartitions is 0"
    )


def test_manual_partition_membership() -> None:
    strategy = RolloutStrategy.model_validate(
        {
            "partitions": [
                {"name": "canary", "clusterSelector": {"matchLabels": CANARY}},
                {"name": "no-criteria"},
                {"name": "eu", "clusterGroup": "eu"},
                {"name": "empty", "clusterName": "nobody"},
                {"name": "also-canary", "clusterSelector": {}},
            ]
        }
    )
    targets = [
        target("canary-eu", "ready-v1", {**CANARY, "region": "eu"}),
        target("prod-eu", "ready-v1", {**PROD, "region": "eu"}),
        target("prod-us", "ready-v1", PROD),
    ]
    partitions = split_partitions(strategy, targets, GROUPS)
    assert [(p.name, [t.cluster.metadata.name for t in p.targets]) for p in partitions] == [
        ("canary", ["canary-eu"]),
        ("eu", ["prod-eu"]),
        ("also-canary", ["prod-us"]),
    ]


def test_unmatched_clusters_form_a_trailing_partition() -> None:
    strategy = RolloutStrategy.model_validate(
        {"maxUnavailable": "50%", "partitions": [{"name": "canary", "clusterName": "c0"}]}
    )
    targets = [target(f"c{i}", "ready-v1") for i in range(5)]
    partitions = split_partitions(strategy, targets, [])
    assert [(p.name, len(p.targets), p.max_unavailable) for p in partitions] == [
        ("canary", 1, 1),
        ("unmatched", 4, 2),
    ]


def many(count: int, broken: int = 0) -> list[RolloutTarget]:
    return [target(f"c{i:03}", "broken-v1" if i < broken else "ready-v1") for i in range(count)]


AUTO_CASES: list[tuple[str, int, int, dict[str, Any], list[tuple[str, int]], int]] = [
    (
        "below-threshold-is-one-partition",
        199,
        0,
        {},
        [("all", 199)],
        19,
    ),
    (
        "at-threshold-chunks-of-25-percent",
        200,
        0,
        {},
        [("all-1", 50), ("all-2", 50), ("all-3", 50), ("all-4", 50)],
        20,
    ),
    (
        "custom-threshold-and-size",
        10,
        0,
        {"autoPartitionThreshold": 10, "autoPartitionSize": 4},
        [("all-1", 4), ("all-2", 4), ("all-3", 2)],
        1,
    ),
    (
        "unavailable-first-partition-stops-the-rest",
        200,
        6,
        {},
        [("all-1", 50), ("all-2", 50), ("all-3", 50), ("all-4", 50)],
        6,
    ),
]


@pytest.mark.parametrize(
    ("count", "broken", "extra", "partitions", "promoted"),
    [c[1:] for c in AUTO_CASES],
    ids=[c[0] for c in AUTO_CASES],
)
def test_auto_partitions(
    count: int, broken: int, extra: dict[str, Any], partitions: list[tuple[str, int]], promoted: int
) -> None:
    strategy = {"maxUnavailable": "10%", **extra}
    targets = many(count, broken)
    split = split_partitions(RolloutStrategy.model_validate(strategy), targets, [])
    assert [(p.name, len(p.targets)) for p in split] == partitions
    assert rollout(targets, strategy).count(PROMOTE) == promoted


def test_auto_partitions_share_the_bundle_budget_evenly() -> None:
    outcomes = rollout(many(200), {"maxUnavailable": "10%"})
    per_partition = [outcomes[i : i + 50].count(PROMOTE) for i in range(0, 200, 50)]
    assert per_partition == [5, 5, 5, 5]


def test_staged_reason_names_the_full_budget() -> None:
    decisions = plan_rollout(
        RolloutStrategy(maxUnavailable=1),
        [target("c0", "ready-v1"), target("c1", "ready-v1")],
        [],
        bundle_paused=False,
    ).decisions
    assert decisions[1] == RolloutDecision(
        "fleet-default/c1",
        stage=True,
        reason="staged: bundle has 1 unavailable, maxUnavailable is 1",
    )


def offline(name: str, runs: str, labels: dict[str, str] | None = None) -> RolloutTarget:
    return RolloutTarget(cluster(name, labels), NEW, RUNS[runs], offline=True)


ONLINE = False
OFF = True

# (clusters as (runs, offline), strategy, expected with the default Ignore, expected with Block)
OFFLINE_CASES: list[tuple[str, list[tuple[str, bool]], dict[str, Any], list[str], list[str]]] = [
    (
        "offline-unavailable-uses-no-budget",
        [("broken-v1", OFF), ("ready-v1", ONLINE), ("ready-v1", ONLINE)],
        {"maxUnavailable": 1},
        [PROMOTE, PROMOTE, STAGE],
        [PROMOTE, STAGE, STAGE],
    ),
    (
        "offline-ready-is-promoted-beyond-budget",
        [("ready-v1", ONLINE), ("ready-v1", OFF), ("ready-v1", OFF)],
        {"maxUnavailable": 1},
        [PROMOTE, PROMOTE, PROMOTE],
        [PROMOTE, STAGE, STAGE],
    ),
    (
        "offline-stale-deployment-does-not-fill-budget",
        [("broken-v2", OFF), ("applying-v2", OFF), ("ready-v1", ONLINE)],
        {"maxUnavailable": 1},
        [KEEP, KEEP, PROMOTE],
        [KEEP, KEEP, STAGE],
    ),
    (
        "offline-creation-takes-no-budget",
        [("none", OFF), ("ready-v1", ONLINE)],
        {"maxUnavailable": 1},
        [CREATE, PROMOTE],
        [CREATE, STAGE],
    ),
    (
        "offline-creation-still-limited-by-max-new",
        [("none", OFF), ("none", OFF), ("none", ONLINE)],
        {"maxNew": 1},
        [CREATE, KEEP, KEEP],
        [CREATE, KEEP, KEEP],
    ),
]


@pytest.mark.parametrize(
    ("clusters", "strategy", "ignored", "blocked"),
    [c[1:] for c in OFFLINE_CASES],
    ids=[c[0] for c in OFFLINE_CASES],
)
def test_offline_clusters_never_block_unless_asked(
    clusters: list[tuple[str, bool]],
    strategy: dict[str, Any],
    ignored: list[str],
    blocked: list[str],
) -> None:
    targets = [
        offline(f"c{i}", runs) if off else target(f"c{i}", runs)
        for i, (runs, off) in enumerate(clusters)
    ]
    assert rollout(targets, strategy) == ignored
    assert rollout(targets, {**strategy, "offlineClusters": "Ignore"}) == ignored
    assert rollout(targets, {**strategy, "offlineClusters": "Block"}) == blocked


def offline_fleet(canary_runs: str, canary_offline: bool) -> list[RolloutTarget]:
    make = offline if canary_offline else target
    return [
        make("canary-1", canary_runs, CANARY),
        make("canary-2", canary_runs, CANARY),
        target("prod-1", "ready-v1", {**PROD, "region": "eu"}),
        offline("prod-2", "ready-v1", PROD),
    ]


# (what both canaries run, whether they are offline, expected with Ignore, expected with Block)
OFFLINE_PARTITION_CASES: list[tuple[str, str, bool, list[str], list[str]]] = [
    (
        "offline-canaries-never-hold-their-partition-back",
        "broken-v2",
        OFF,
        [KEEP, KEEP, PROMOTE, PROMOTE],
        [KEEP, KEEP, STAGE, STAGE],
    ),
    (
        "offline-cluster-in-a-waiting-partition-waits",
        "broken-v2",
        ONLINE,
        [KEEP, KEEP, STAGE, STAGE],
        [KEEP, KEEP, STAGE, STAGE],
    ),
    (
        "offline-cluster-in-a-partition-with-room-is-promoted",
        "ready-v2",
        ONLINE,
        [KEEP, KEEP, PROMOTE, PROMOTE],
        [KEEP, KEEP, PROMOTE, PROMOTE],
    ),
]


@pytest.mark.parametrize(
    ("canary_runs", "canary_offline", "ignored", "blocked"),
    [c[1:] for c in OFFLINE_PARTITION_CASES],
    ids=[c[0] for c in OFFLINE_PARTITION_CASES],
)
def test_offline_clusters_in_partitions(
    canary_runs: str, canary_offline: bool, ignored: list[str], blocked: list[str]
) -> None:
    targets = offline_fleet(canary_runs, canary_offline)
    assert rollout(targets, PARTITIONED, groups=GROUPS) == ignored
    block = {**PARTITIONED, "offlineClusters": "Block"}
    assert rollout(targets, block, groups=GROUPS) == blocked


def test_offline_promotion_says_why() -> None:
    decisions = plan_rollout(
        RolloutStrategy(maxUnavailable=1),
        [target("c0", "ready-v1"), offline("c1", "ready-v1")],
        [],
        bundle_paused=False,
    ).decisions
    assert decisions[1].reason == "promoted: cluster offline"


def test_paused_offline_cluster_stages() -> None:
    paused = RolloutTarget(cluster("c0", paused=True), NEW, RUNS["ready-v1"], offline=True)
    assert rollout([paused]) == [STAGE]


@pytest.mark.parametrize(
    ("strategy", "targets", "alone"),
    [
        pytest.param(None, 1000, True, id="default-strategy"),
        pytest.param({"maxUnavailable": "100%"}, 300, True, id="all-percent"),
        pytest.param({"maxUnavailable": 10}, 10, True, id="count-covers-all"),
        pytest.param({"maxUnavailable": 10}, 11, False, id="count-below-targets"),
        pytest.param({"maxUnavailable": "50%"}, 4, False, id="half"),
        pytest.param(
            {"partitions": [{"name": "canary", "clusterName": "a"}]}, 4, False, id="manual"
        ),
    ],
)
def test_decided_alone(strategy: dict[str, Any] | None, targets: int, alone: bool) -> None:
    model = None if strategy is None else RolloutStrategy.model_validate(strategy)
    assert decided_alone(model, targets) is alone


def test_only_creations_maxnew_holds_back_are_capped() -> None:
    strategy = RolloutStrategy(maxNew=1)
    targets = [target("a", "none"), target("b", "none"), target("c", "none", paused=True)]
    decisions = plan_rollout(strategy, targets, [], bundle_paused=False).decisions
    assert [(d.create, d.capped) for d in decisions] == [
        (True, False),
        (False, True),
        (False, False),
    ]
