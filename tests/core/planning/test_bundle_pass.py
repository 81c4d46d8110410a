"""The planning pass: the resolvers are asked in one order, with what the targeted clusters need,
and their answers reach the render; a resolver's error fails the whole Bundle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from bundler.api.bundle import Bundle
from bundler.core.images.wanted import ImageQuery, ResolvedImages
from bundler.core.management_values import ManagementReference
from bundler.core.planning.bundle_pass import plan_pass
from bundler.core.planning.inputs import Delivered, Dependencies, ResolvedVersions
from bundler.core.planning.version_query import VersionQuery
from bundler.errors import InvalidInputError
from tests.support.builders import WS, bundle, cluster, helm_of

CLUSTERS = [cluster("prod-1", {"env": "prod"}), cluster("dev-1", {"env": "dev"})]


@dataclass
class Recorded:
    """Resolvers that answer from tables and record what they were asked, in order."""

    versions_table: dict[str, str] = field(default_factory=dict)
    failing: str | None = None
    asked: list[str] = field(default_factory=list)

    def _ask(self, what: str) -> None:
        self.asked.append(what)
        if what == self.failing:
            raise InvalidInputError(f"{what} failed", obj="Bundle fleet-default/app")

    def management_values(
        self, bundle: Bundle, references: Sequence[ManagementReference]
    ) -> Delivered:
        self._ask("management_values")
        return {(r.ref.kind.value, r.ref.name): "sha256:1" for r in references}

    def versions(self, bundle: Bundle, queries: Sequence[VersionQuery]) -> ResolvedVersions:
        self._ask("versions")
        return {q.key: self.versions_table[q.constraint] for q in queries}

    def images(self, bundle: Bundle, queries: Sequence[ImageQuery]) -> ResolvedImages | None:
        self._ask("images")
        return None

    def dependencies(self, bundle: Bundle) -> Dependencies | None:
        self._ask("dependencies")
        return None


MANAGED = {"valuesFrom": [{"kind": "ConfigMap", "name": "shared", "source": "Management"}]}


@pytest.mark.parametrize(
    ("helm", "asked"),
    [
        pytest.param({}, ["versions", "images", "dependencies"], id="no-management-values"),
        pytest.param(
            MANAGED,
            ["management_values", "versions", "images", "dependencies"],
            id="management-values-first",
        ),
    ],
)
def test_resolvers_are_asked_in_the_pass_order(helm: dict[str, object], asked: list[str]) -> None:
    resolvers = Recorded()
    plan, inputs = plan_pass(bundle([{"clusterSelector": {}}], helm=helm), CLUSTERS, [], resolvers)
    assert resolvers.asked == asked
    assert len(plan.deployments) == 2
    assert bool(inputs.delivered) == bool(helm)


def test_a_resolved_range_reaches_every_targeted_cluster() -> None:
    b = bundle([{"clusterSelector": {"matchLabels": {"env": "prod"}}}], helm={"version": "^1"})
    plan, _ = plan_pass(b, CLUSTERS, [], Recorded({"^1": "1.4.0"}))
    assert [d.cluster for d in plan.deployments] == [f"{WS}/prod-1"]
    assert [helm_of(d.options).version for d in plan.deployments] == ["1.4.0"]


@pytest.mark.parametrize("failing", ["management_values", "versions", "images", "dependencies"])
def test_a_resolver_error_fails_the_bundle_and_stops_the_pass(failing: str) -> None:
    resolvers = Recorded(failing=failing)
    with pytest.raises(InvalidInputError, match=f"{failing} failed"):
        plan_pass(bundle([{"clusterSelector": {}}], helm=MANAGED), CLUSTERS, [], resolvers)
    assert resolvers.asked[-1] == failing
