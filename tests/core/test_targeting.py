from __future__ import annotations

from typing import Any

import pytest

from bundler.core.targeting import Criterion, groups_of, match_targets
from tests.support.builders import bundle, cluster, group

PROD_EU = cluster("prod-eu", {"env": "prod", "region": "eu"})
GROUPS = [
    group("prod", {"matchLabels": {"env": "prod"}}, labels={"tier": "critical"}),
    group("eu", {"matchLabels": {"region": "eu"}}, labels={"geo": "europe"}),
    group("staging", {"matchLabels": {"env": "staging"}}),
]

# (targets, targetMode, expected contributing target names, excluded?)
CASES: list[tuple[str, list[dict[str, Any]], str, list[str], bool]] = [
    ("no-criteria-matches-nothing", [{"name": "t"}], "FirstMatch", [], False),
    (
        "empty-selector-matches-all",
        [{"name": "t", "clusterSelector": {}}],
        "FirstMatch",
        ["t"],
        False,
    ),
    ("cluster-name", [{"name": "t", "clusterName": "prod-eu"}], "FirstMatch", ["t"], False),
    ("cluster-name-other", [{"name": "t", "clusterName": "x"}], "FirstMatch", [], False),
    (
        "criteria-are-anded",
        [
            {
                "name": "t",
                "clusterName": "prod-eu",
                "clusterSelector": {"matchLabels": {"env": "dev"}},
            }
        ],
        "FirstMatch",
        [],
        False,
    ),
    (
        "first-match-wins",
        [
            {"name": "a", "clusterSelector": {"matchLabels": {"env": "prod"}}},
            {"name": "b", "clusterSelector": {}},
        ],
        "FirstMatch",
        ["a"],
        False,
    ),
    (
        "all-matches-in-order",
        [
            {"name": "a", "clusterSelector": {"matchLabels": {"env": "prod"}}},
            {"name": "skip", "clusterSelector": {"matchLabels": {"env": "dev"}}},
            {"name": "b", "clusterSelector": {}},
        ],
        "AllMatches",
        ["a", "b"],
        False,
    ),
    (
        "do-not-deploy-on-deciding-target",
        [
            {"name": "a", "clusterName": "prod-eu", "doNotDeploy": True},
            {"name": "b", "clusterSelector": {}},
        ],
        "FirstMatch",
        ["a"],
        True,
    ),
    (
        "do-not-deploy-on-later-target-is-ignored-in-first-match",
        [
            {"name": "a", "clusterSelector": {}},
            {"name": "b", "clusterName": "prod-eu", "doNotDeploy": True},
        ],
        "FirstMatch",
        ["a"],
        False,
    ),
    ("cluster-group", [{"name": "t", "clusterGroup": "eu"}], "FirstMatch", ["t"], False),
    (
        "cluster-group-not-member",
        [{"name": "t", "clusterGroup": "staging"}],
        "FirstMatch",
        [],
        False,
    ),
    ("cluster-group-unknown", [{"name": "t", "clusterGroup": "nope"}], "FirstMatch", [], False),
    (
        "group-selector",
        [{"name": "t", "clusterGroupSelector": {"matchLabels": {"geo": "europe"}}}],
        "FirstMatch",
        ["t"],
        False,
    ),
    (
        "group-name-and-selector-must-hold-for-one-group",
        [
            {
                "name": "t",
                "clusterGroup": "prod",
                "clusterGroupSelector": {"matchLabels": {"geo": "europe"}},
            }
        ],
        "FirstMatch",
        [],
        False,
    ),
    (
        "group-name-and-selector-same-group",
        [
            {
                "name": "t",
                "clusterGroup": "eu",
                "clusterGroupSelector": {"matchLabels": {"geo": "europe"}},
            }
        ],
        "FirstMatch",
        ["t"],
        False,
    ),
    ("no-targets", [], "FirstMatch", [], False),
]


@pytest.mark.parametrize(
    ("targets", "mode", "expected", "excluded"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_match_targets(
    targets: list[dict[str, Any]], mode: str, expected: list[str], excluded: bool
) -> None:
    decision = match_targets(bundle(targets, targetMode=mode), PROD_EU, GROUPS)
    assert [r.label for r in decision.contributing] == expected
    assert (decision.excluded_by is not None) == excluded
    assert decision.deploy == (bool(expected) and not excluded)


def test_cluster_in_no_group_matches_only_non_group_targets() -> None:
    loner = cluster("loner", {"env": "qa"})
    b = bundle([{"name": "g", "clusterGroup": "prod"}, {"name": "all", "clusterSelector": {}}])
    decision = match_targets(b, loner, GROUPS)
    assert [r.label for r in decision.contributing] == ["all"]
    assert decision.results[0].failed is Criterion.CLUSTER_GROUP


def test_other_workspace_is_never_targeted() -> None:
    other = cluster("prod-eu", {"env": "prod"}, ns="tenant-b")
    decision = match_targets(bundle([{"name": "all", "clusterSelector": {}}]), other, GROUPS)
    assert not decision.deploy


def test_first_failed_criterion_is_reported() -> None:
    b = bundle(
        [
            {
                "name": "t",
                "clusterName": "prod-eu",
                "clusterSelector": {"matchLabels": {"env": "dev"}},
            }
        ]
    )
    (result,) = match_targets(b, PROD_EU, GROUPS).results
    assert result.failed is Criterion.CLUSTER_SELECTOR


def test_a_clusters_groups_are_worked_out_once_per_cluster_and_group_models() -> None:
    member = cluster("m", {"env": "prod"})
    prod = group("prod", {"matchLabels": {"env": "prod"}})
    dev = group("dev", {"matchLabels": {"env": "dev"}})
    first = groups_of(member, [prod, dev])
    assert first == (prod,)
    assert groups_of(member, [prod, dev]) is first  # a new list of the same models
    relabelled = group("dev", {"matchLabels": {"env": "prod"}})
    assert groups_of(member, [prod, relabelled]) == (prod, relabelled)
    assert groups_of(cluster("m", {"env": "dev"}), [prod, dev]) == (dev,)
