"""Fleet's selecting and customizing targets as one bundler target list: for every cluster of a
small fleet, bundler's own targeting of the converted list decides what Fleet's documented rules
decide (tests.support.core.fleet.fleet_semantics), in FirstMatch and AllMatches; pairs bundler
cannot express are reported, pairs that match no cluster left out."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.fleet.targets import FleetTarget, combine, criteria_of
from bundler.core.planning import merged_content
from bundler.core.targeting import match_targets
from tests.support.builders import bundle, cluster, group
from tests.support.core.fleet.fleet_semantics import fleet_choice

GROUPS = [
    group("default", {}),
    group("edge", {"matchLabels": {"tier": "edge"}}, labels={"kind": "edge"}),
    group("eu-group", {"matchLabels": {"region": "eu"}}, labels={"geo": "europe"}),
]
SELECTORS = {g.metadata.name: g.spec.selector.model_dump(exclude_none=True) for g in GROUPS}
CLUSTERS = [
    cluster("eu-prod", {"region": "eu", "env": "prod"}),
    cluster("eu-dev", {"region": "eu", "env": "dev"}),
    cluster("us-prod", {"region": "us", "env": "prod"}),
    cluster("edge-eu", {"region": "eu", "env": "prod", "tier": "edge"}),
    cluster("edge-us", {"region": "us", "tier": "edge"}),
    cluster("bare", {}),
]
EU = {"name": "eu", "clusterSelector": {"matchLabels": {"region": "eu"}}}
EDGE_GROUP = {"name": "edge-group", "clusterGroup": "edge"}
ALL = {"name": "all", "clusterSelector": {}}
PROD = {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}
EDGE = {"name": "edge", "clusterGroup": "edge"}
DEV_OFF = {
    "name": "dev-off",
    "clusterSelector": {"matchLabels": {"env": "dev"}},
    "doNotDeploy": True,
}
BY_NAME = {"name": "by-name", "clusterName": "us-prod"}
US = {"name": "us", "clusterSelector": {"matchLabels": {"region": "us"}}}
EUROPE_GROUPS = {"name": "europe", "clusterGroupSelector": {"matchLabels": {"geo": "europe"}}}
NOTHING = {"name": "nothing"}

# (id, the GitRepo's targets, the customizations, AllMatches?)
CASES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]], bool]] = [
    ("one-selector-for-all", [ALL], [PROD, EDGE], False),
    ("gitrepo-restricts-customizations", [EU], [PROD, US], False),
    ("two-gitrepo-targets", [EU, EDGE_GROUP], [PROD, EDGE], False),
    ("do-not-deploy-customization", [ALL], [DEV_OFF, PROD], False),
    ("by-cluster-name", [ALL, EU], [BY_NAME, PROD], False),
    ("default-group", [{"name": "default", "clusterGroup": "default"}], [EDGE, PROD], False),
    ("group-selector-customization", [ALL], [EUROPE_GROUPS, PROD], False),
    ("customization-matching-nothing", [ALL], [NOTHING, PROD], False),
    ("all-matches", [ALL], [PROD, EDGE, US], True),
    ("all-matches-restricted", [EU, EDGE_GROUP], [PROD, EDGE, DEV_OFF], True),
]


def _fleet_targets(raw: list[dict[str, Any]], *, customizing: bool) -> list[FleetTarget]:
    return [
        FleetTarget(
            str(t["name"]),
            criteria_of(t),
            overrides={"helm": {"values": {str(t["name"]): True}}} if customizing else {},
            do_not_deploy=bool(t.get("doNotDeploy")),
        )
        for t in raw
    ]


@pytest.mark.parametrize(
    ("selecting", "customizing", "all_matches"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bundler_targets_decide_what_fleet_decides(
    selecting: list[dict[str, Any]], customizing: list[dict[str, Any]], all_matches: bool
) -> None:
    combined = combine(
        _fleet_targets(selecting, customizing=False),
        _fleet_targets(customizing, customizing=True),
        all_matches=all_matches,
        groups=SELECTORS,
    )
    assert combined.problems == []
    converted = bundle(combined.targets, targetMode="AllMatches" if all_matches else "FirstMatch")
    for one in CLUSTERS:
        expected = fleet_choice(
            selecting, customizing, all_matches=all_matches, cluster=one, groups=GROUPS
        )
        decision = match_targets(converted, one, GROUPS)
        applied = sorted((merged_content(converted, decision).get("values") or {}).keys())
        if not decision.deploy:
            applied = []  # the options of a cluster that gets nothing do not matter
        assert (decision.deploy, applied) == (expected[0], sorted(expected[1])), one.metadata.name


def test_first_match_writes_one_block_per_gitrepo_target() -> None:
    combined = combine(
        _fleet_targets([EU, EDGE_GROUP], customizing=False),
        _fleet_targets([PROD], customizing=True),
        all_matches=False,
    )
    assert combined.targets == [
        {
            "name": "prod-eu",
            "clusterSelector": {"matchLabels": {"env": "prod", "region": "eu"}},
            "helm": {"values": {"prod": True}},
        },
        {"name": "eu", "clusterSelector": {"matchLabels": {"region": "eu"}}},
        {
            "name": "prod-edge-group",
            "clusterGroup": "edge",
            "clusterSelector": {"matchLabels": {"env": "prod"}},
            "helm": {"values": {"prod": True}},
        },
        {"name": "edge-group", "clusterGroup": "edge"},
    ]


@pytest.mark.parametrize(
    ("selecting", "customizing", "targets", "problem"),
    [
        (
            {"name": "g", "clusterSelector": {"matchLabels": {"env": "prod"}}},
            {"name": "c", "clusterSelector": {"matchLabels": {"env": "dev"}}},
            ["g"],
            None,
        ),
        ({"name": "g", "clusterName": "a"}, {"name": "c", "clusterName": "b"}, ["g"], None),
        (
            {"name": "g", "clusterGroup": "edge"},
            {"name": "c", "clusterGroup": "eu-group"},
            ["g"],
            "they name two cluster groups (eu-group and edge)",
        ),
        (
            {"name": "g", "clusterGroup": "edge"},
            EUROPE_GROUPS,
            ["g"],
            "bundler needs one group to satisfy both",
        ),
    ],
    ids=["labels-disagree", "names-disagree", "two-groups", "group-and-group-selector"],
)
# (without the groups' definitions: bundler cannot say "in two groups" with one target)
def test_pairs_that_cannot_be_one_target(
    selecting: dict[str, Any], customizing: dict[str, Any], targets: list[str], problem: str | None
) -> None:
    combined = combine(
        _fleet_targets([selecting], customizing=False),
        _fleet_targets([customizing], customizing=True),
        all_matches=False,
    )
    assert [t["name"] for t in combined.targets] == targets
    assert [why for _, _, why in combined.problems] == (
        [] if problem is None else [next(why for _, _, why in combined.problems if problem in why)]
    )
