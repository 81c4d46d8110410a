"""The decide step: targeting, the ranges and images a cluster needs, management references."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.planning.decide import (
    decide_bundle,
    decide_cluster,
    deciding_references,
    version_queries,
    wanted_images,
)
from bundler.core.planning.version_query import VersionQuery, query_for
from tests.support.builders import bundle, cluster

PROD = cluster("prod-1", {"env": "prod"})
DEV = cluster("dev-1", {"env": "dev"})
IMAGE = {"name": "app", "repository": "127.0.0.1:5000/app", "policy": {"semver": {"range": "^1.0"}}}


@pytest.mark.parametrize(
    ("helm", "expected"),
    [
        pytest.param({"repo": "r", "chart": "c", "version": "1.2.3"}, None, id="exact"),
        pytest.param(
            {"repo": "r", "chart": "c", "version": "^1.0"},
            VersionQuery("r", "c", "^1.0"),
            id="range",
        ),
        pytest.param(
            {"repo": "r", "chart": "c"}, VersionQuery("r", "c", "*"), id="no-version-is-latest"
        ),
        pytest.param(
            {"repo": "r", "chart": "c", "version": "~2", "secretRef": {"name": "creds"}},
            VersionQuery("r", "c", "~2", "creds"),
            id="range-with-credentials",
        ),
    ],
)
def test_query_for(helm: dict[str, Any], expected: VersionQuery | None) -> None:
    assert query_for(helm) == expected


def test_an_untargeted_cluster_needs_nothing() -> None:
    b = bundle([{"clusterSelector": {"matchLabels": {"env": "prod"}}}], helm={"version": "^1"})
    decided = decide_cluster(b, DEV, [])
    assert not decided.decision.deploy
    assert decided.query is None and decided.images == ()


def test_each_range_and_image_once_over_the_bundle() -> None:
    b = bundle(
        [
            {"clusterSelector": {"matchLabels": {"env": "prod"}}, "helm": {"version": "^2"}},
            {"clusterSelector": {}},
        ],
        helm={"version": "^1"},
        images=[IMAGE],
    )
    decisions = decide_bundle(b, [PROD, DEV, cluster("prod-2", {"env": "prod"})], [])
    assert [d.cluster.metadata.name for d in decisions] == ["dev-1", "prod-1", "prod-2"]
    queries = version_queries(decisions)
    assert [q.constraint for q in queries] == ["^1", "^2"]
    assert [q.image.name for q in wanted_images(decisions)] == ["app"]


@pytest.mark.parametrize(
    ("clusters", "fields"),
    [
        pytest.param([PROD, DEV], ["spec.helm.valuesFrom[0]", "spec.targets[0].helm.valuesFrom[0]"],
                     id="both-targets-decide"),
        pytest.param([DEV], ["spec.helm.valuesFrom[0]"], id="prod-target-decides-nothing"),
        pytest.param([], [], id="nothing-targeted"),
    ],
)  # fmt: skip
def test_management_references_of_deciding_targets_only(
    clusters: list[Any], fields: list[str]
) -> None:
    management = {"kind": "ConfigMap", "name": "shared", "source": "Management"}
    b = bundle(
        [
            {
                "clusterSelector": {"matchLabels": {"env": "prod"}},
                "helm": {"valuesFrom": [{**management, "name": "prod"}]},
            },
            {"clusterSelector": {}},
        ],
        helm={"valuesFrom": [management]},
        targetMode="AllMatches",
    )
    found = deciding_references(b, decide_bundle(b, clusters, []))
    assert [r.field for r in found] == fields
