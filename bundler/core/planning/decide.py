"""The decide step of planning: which clusters a Bundle targets, and what their options need
resolved before anything is rendered.

For each cluster: the targeting decision (bundler.core.targeting), the version range its merged
`helm` names (None when the version is exact), and the images its values may read. Over a Bundle:
every range and image once, and the management values the deciding targets name. Every driver of
the planning pass asks this one step (the manager's row memo, which keeps a cluster's decision
while its labels stay, and the offline commands), so they agree on what a cluster needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.core.images.wanted import ImageKey, ImageQuery
from bundler.core.management_values import ManagementReference, management_references
from bundler.core.planning.memo import memo_of
from bundler.core.planning.version_query import VersionQuery
from bundler.core.targeting import TargetDecision, match_targets


@dataclass(frozen=True, slots=True)
class ClusterDecision:
    """One cluster looked at by one Bundle: targeted or not and, when targeted, what its options
    need resolved."""

    cluster: Cluster
    decision: TargetDecision
    query: VersionQuery | None = None
    images: tuple[ImageQuery, ...] = ()


def decide_cluster(
    bundle: Bundle, cluster: Cluster, groups: Sequence[ClusterGroup]
) -> ClusterDecision:
    decision = match_targets(bundle, cluster, groups)
    if not decision.deploy:
        return ClusterDecision(cluster, decision)
    contributing = tuple(result.index for result in decision.contributing)
    query, images = memo_of(bundle).needs(contributing, decision)
    return ClusterDecision(cluster, decision, query, images)


def version_queries(decisions: Iterable[ClusterDecision]) -> list[VersionQuery]:
    """Each range the targeted clusters need, once, sorted."""
    found = {d.query.key: d.query for d in decisions if d.query is not None}
    return [found[k] for k in sorted(found)]


def wanted_images(decisions: Iterable[ClusterDecision]) -> list[ImageQuery]:
    """The images the targeted clusters want, each (name, selection) once, in order."""
    found: dict[ImageKey, ImageQuery] = {}
    for decided in decisions:
        for query in decided.images:
            found.setdefault(query.key, query)
    return list(found.values())


def deciding_references(
    bundle: Bundle, decisions: Iterable[ClusterDecision]
) -> list[ManagementReference]:
    """The valuesFrom entries with source: Management the targeted clusters' options hold:
    spec.helm's, and those of the targets that decide for some cluster."""
    references = management_references(bundle)
    deciding = [d.decision for d in decisions if d.decision.deploy]
    if not references or not deciding:
        return []
    used = {result.index for decision in deciding for result in decision.contributing}
    return [r for r in references if r.target is None or r.target in used]


def decide_bundle(
    bundle: Bundle, clusters: Sequence[Cluster], groups: Sequence[ClusterGroup]
) -> list[ClusterDecision]:
    """The decision of every cluster, sorted by (namespace, name)."""
    ordered = sorted(clusters, key=lambda c: (c.metadata.namespace or "", c.metadata.name))
    return [decide_cluster(bundle, cluster, groups) for cluster in ordered]
