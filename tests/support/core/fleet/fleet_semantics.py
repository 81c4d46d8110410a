"""Fleet's documented targeting, written out for tests to compare bundler's conversion with.

A cluster gets a bundle when one of the selecting targets (the GitRepo's) matches it, the first
that does deciding (its doNotDeploy keeps the bundle off); then the customizations: with
FirstMatch the first that matches gives its options (its doNotDeploy keeps the bundle off), with
AllMatches every one that matches, in order (any doNotDeploy keeps it off). A target matches when
it has a criterion and all its criteria hold for the cluster through one of its groups (or, for a
cluster in no group, with no group), as Fleet's matcher evaluates them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.selector import LabelSelector
from bundler.core.selectors import selector_matches

CRITERIA = ("clusterName", "clusterGroup", "clusterSelector", "clusterGroupSelector")


def _selector(raw: Mapping[str, Any]) -> LabelSelector:
    return LabelSelector.model_validate(raw)


def fleet_matches(
    target: Mapping[str, Any], cluster: Cluster, groups: Sequence[ClusterGroup]
) -> bool:
    """Whether a Fleet target matches `cluster` (groups: every ClusterGroup of the workspace)."""
    criteria = {k: target[k] for k in CRITERIA if target.get(k) not in (None, "")}
    if not criteria:
        return False
    labels = cluster.metadata.labels
    member = [g for g in groups if selector_matches(g.spec.selector, labels)]
    candidates: list[tuple[str, Mapping[str, str]]] = [
        (g.metadata.name, g.metadata.labels) for g in member
    ] or [("", {})]
    for group_name, group_labels in candidates:
        checks = [
            "clusterName" not in criteria or criteria["clusterName"] == cluster.metadata.name,
            "clusterGroup" not in criteria or criteria["clusterGroup"] == group_name,
            "clusterGroupSelector" not in criteria
            or selector_matches(_selector(criteria["clusterGroupSelector"]), group_labels),
            "clusterSelector" not in criteria
            or selector_matches(_selector(criteria["clusterSelector"]), labels),
        ]
        if all(checks):
            return True
    return False


def fleet_choice(
    selecting: Sequence[Mapping[str, Any]],
    customizing: Sequence[Mapping[str, Any]],
    *,
    all_matches: bool,
    cluster: Cluster,
    groups: Sequence[ClusterGroup],
) -> tuple[bool, list[str]]:
    """Whether Fleet deploys to `cluster`, and the names of the customizations it applies."""
    chosen = next((t for t in selecting if fleet_matches(t, cluster, groups)), None)
    if chosen is None or chosen.get("doNotDeploy"):
        return False, []
    matching = [c for c in customizing if fleet_matches(c, cluster, groups)]
    if not all_matches:
        matching = matching[:1]
    if any(c.get("doNotDeploy") for c in matching):
        return False, []
    return True, [str(c["name"]) for c in matching]
