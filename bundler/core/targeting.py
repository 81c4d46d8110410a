"""Targeting: which of a Bundle's targets pick a Cluster, and which target decides.

A target's present criteria (clusterName, clusterSelector, clusterGroup, clusterGroupSelector) are
AND-ed; a target with no criterion matches nothing, `clusterSelector: {}` matches every cluster.
The two group criteria hold when one single group of the cluster satisfies both. Targets are tried
in order: with FirstMatch the first matching target decides; with AllMatches every matching target
contributes its overrides, in order. A deciding target with `doNotDeploy` keeps the bundle off the
cluster (with AllMatches, any matching target with doNotDeploy does). Only clusters of the bundle's
own workspace are ever candidates, and never one an import gate holds back (an imported Cluster API
cluster whose control plane is not initialized or whose kubeconfig Secret is missing), nor one whose
name cannot be written into a label value (the Cluster's status says why).

A `clusterGroup` (of a target or a partition) or a `dependsOn` naming nothing in the workspace is
not an error (the object may be created later), but it is told: `missing_references` says which.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bundler.api.bundle import Bundle, BundleTarget, TargetMode
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.selector import LabelSelector
from bundler.core.capi_import import is_gated
from bundler.core.dependencies import unmatched_selector
from bundler.core.naming import is_dns1123_label
from bundler.core.selectors import selector_matches


class Criterion(StrEnum):
    WORKSPACE = "workspace"
    NO_CRITERIA = "no criteria"
    CLUSTER_NAME = "clusterName"
    CLUSTER_SELECTOR = "clusterSelector"
    CLUSTER_GROUP = "clusterGroup"
    CLUSTER_GROUP_SELECTOR = "clusterGroupSelector"


@dataclass(frozen=True, slots=True)
class TargetResult:
    """How one target fared against one cluster: matched, or the first criterion that failed."""

    index: int
    target: BundleTarget
    failed: Criterion | None

    @property
    def matched(self) -> bool:
        return self.failed is None

    @property
    def label(self) -> str:
        return self.target.name or f"targets[{self.index}]"


@dataclass(frozen=True, slots=True)
class TargetDecision:
    """The outcome for one (bundle, cluster): the contributing targets, in order, or why not."""

    results: tuple[TargetResult, ...]
    contributing: tuple[TargetResult, ...]
    excluded_by: TargetResult | None

    @property
    def deploy(self) -> bool:
        return bool(self.contributing) and self.excluded_by is None


def groups_of(cluster: Cluster, groups: Sequence[ClusterGroup]) -> tuple[ClusterGroup, ...]:
    """The groups of the cluster's workspace whose selector picks the cluster.

    Asked for every (bundle, cluster), but the answer depends on the cluster and the groups only:
    it is kept per cluster model, for as long as the very same group models are asked about.
    """
    if not groups:
        return ()
    known = _GROUPS.get(id(cluster))
    if known is not None and known[0] is cluster and _same_models(known[1], groups):
        return known[2]
    found = tuple(
        g
        for g in groups
        if g.metadata.namespace == cluster.metadata.namespace
        and selector_matches(g.spec.selector, cluster.metadata.labels)
    )
    with _GROUPS_LOCK:
        _GROUPS[id(cluster)] = (cluster, tuple(groups), found)
        while len(_GROUPS) > MAX_REMEMBERED_CLUSTERS:
            del _GROUPS[next(iter(_GROUPS))]
    return found


def _same_models(known: Sequence[ClusterGroup], groups: Sequence[ClusterGroup]) -> bool:
    return len(known) == len(groups) and all(a is b for a, b in zip(known, groups, strict=True))


#: How many clusters' groups are remembered (models are never changed in place, and each entry
#: holds its models, so an id in it always means the same model).
MAX_REMEMBERED_CLUSTERS = 16384
_GROUPS_LOCK = threading.Lock()
_GROUPS: dict[int, tuple[Cluster, tuple[ClusterGroup, ...], tuple[ClusterGroup, ...]]] = {}


def evaluate_target(
    index: int, target: BundleTarget, cluster: Cluster, cluster_groups: Sequence[ClusterGroup]
) -> TargetResult:
    return TargetResult(index, target, _first_failed(target, cluster, cluster_groups))


def _first_failed(
    target: BundleTarget, cluster: Cluster, cluster_groups: Sequence[ClusterGroup]
) -> Criterion | None:
    has_group_criteria = target.clusterGroup is not None or target.clusterGroupSelector is not None
    if target.clusterName is None and target.clusterSelector is None and not has_group_criteria:
        return Criterion.NO_CRITERIA
    if target.clusterName is not None and target.clusterName != cluster.metadata.name:
        return Criterion.CLUSTER_NAME
    if target.clusterSelector is not None and not selector_matches(
        target.clusterSelector, cluster.metadata.labels
    ):
        return Criterion.CLUSTER_SELECTOR
    if has_group_criteria:
        return _group_failure(target.clusterGroup, target.clusterGroupSelector, cluster_groups)
    return None


def _group_failure(
    name: str | None, selector: LabelSelector | None, cluster_groups: Sequence[ClusterGroup]
) -> Criterion | None:
    named = [g for g in cluster_groups if name is None or g.metadata.name == name]
    if not named:
        return Criterion.CLUSTER_GROUP
    if selector is None or any(selector_matches(selector, g.metadata.labels) for g in named):
        return None
    return Criterion.CLUSTER_GROUP_SELECTOR


def match_targets(
    bundle: Bundle, cluster: Cluster, groups: Sequence[ClusterGroup]
) -> TargetDecision:
    """Decide whether and through which targets `bundle` deploys to `cluster`."""
    if (
        cluster.metadata.namespace != bundle.metadata.namespace
        or is_gated(cluster)
        or not is_dns1123_label(cluster.metadata.name)
    ):
        return TargetDecision((), (), None)
    return evaluate_targets(bundle, cluster, groups)


def evaluate_targets(
    bundle: Bundle, cluster: Cluster, groups: Sequence[ClusterGroup]
) -> TargetDecision:
    """How each target's criteria fare against `cluster`, whether or not the cluster may receive
    anything (`match_targets` decides that): what `explain` lists for a gated cluster too."""
    cluster_groups = groups_of(cluster, groups)
    results = tuple(
        evaluate_target(i, t, cluster, cluster_groups) for i, t in enumerate(bundle.spec.targets)
    )
    matched = [r for r in results if r.matched]
    if bundle.spec.targetMode is TargetMode.FIRST_MATCH:
        matched = matched[:1]
    excluded_by = next((r for r in matched if r.target.doNotDeploy), None)
    return TargetDecision(results, tuple(matched), excluded_by)


def missing_references(
    bundle: Bundle,
    groups: Iterable[ClusterGroup],
    bundle_names: Iterable[str],
    bundle_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> list[str]:
    """One line per clusterGroup or dependsOn of `bundle` that names nothing in its workspace,
    and (given the labels of the workspace's Bundles) per dependsOn selector picking none.

    `groups` may span workspaces (only the bundle's own count); `bundle_names` are the names of the
    Bundles of the bundle's workspace.
    """
    workspace = bundle.metadata.namespace
    known_groups = {g.metadata.name for g in groups if g.metadata.namespace == workspace}
    problems = []
    named_groups = [
        (f"spec.targets[{i}].clusterGroup", t.clusterGroup)
        for i, t in enumerate(bundle.spec.targets)
    ]
    strategy = bundle.spec.rolloutStrategy
    named_groups += [
        (f"spec.rolloutStrategy.partitions[{i}].clusterGroup", p.clusterGroup)
        for i, p in enumerate(strategy.partitions if strategy else [])
    ]
    for path, name in named_groups:
        if name is not None and name not in known_groups:
            problems.append(
                f"{path}: ClusterGroup {workspace}/{name} does not exist, so it targets nothing"
            )
    known_bundles = set(bundle_names)
    for i, dep in enumerate(bundle.spec.dependsOn):
        if dep.selector is not None:
            unmatched = (
                None if bundle_labels is None else unmatched_selector(bundle, i, bundle_labels)
            )
            if unmatched is not None:
                problems.append(unmatched)
            continue
        if dep.name not in known_bundles:
            problems.append(
                f"spec.dependsOn[{i}]: Bundle {workspace}/{dep.name} does not exist, so no "
                "cluster can satisfy it"
            )
    return problems
