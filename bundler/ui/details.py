"""What the Bundle, deployment and Cluster pages show, as JSON-ready dicts, from the FleetModel.

Nothing here is decided anew: which target picks a cluster is bundler.core.targeting's answer
and `explain`'s verdict (bundler.core.explain, without rendering: the values shown are the ones
the manager rendered into the BundleDeployment), partitions are bundler.core.rollout's, states
and messages bundler.core.summary's placements, diffs bundler.core.diff.values'. Every string
goes to the browser as data; the page writes it as text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from bundler import yamldump
from bundler.api.bundle import Bundle, BundleTarget, OfflineClusters, RolloutStrategy
from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.meta import Condition
from bundler.api.summary import DisplayState
from bundler.core.content import content_version, source_revision, source_url
from bundler.core.deletion_guard import ALLOW_DELETION
from bundler.core.diff.values import diff_values
from bundler.core.explain import Explanation, target_lines, verdict
from bundler.core.rollout import (
    DEFAULT_MAX_UNAVAILABLE,
    DEFAULT_MAX_UNAVAILABLE_PARTITIONS,
    RolloutTarget,
    is_unavailable,
    resolve_int_or_percent,
    split_partitions,
)
from bundler.core.rollout_failures import RESUME
from bundler.core.summary import Placement
from bundler.core.targeting import groups_of, match_targets, missing_references
from bundler.ui.fleet_model import FleetModel, cluster_entry, is_offline, key_of

# Bootstrap's phases, in order, as conditions of the Cluster.
BOOTSTRAP_PHASES = ("FluxInstalled", "AgentConnected", "Bootstrapped")
# The Bundle states an action lifts: a halted rollout, a held deletion.
HALTED = frozenset({DisplayState.ROLLOUT_HALTED, DisplayState.ROLLED_BACK})
# How many clusters a target lists by name (the count says the rest).
TARGET_CLUSTERS_LISTED = 200


def _content(bundle: Bundle) -> dict[str, Any]:
    """What the Bundle deploys, as the chart panel shows it: a Kustomize source's URL stands
    for the repository, its path for the chart."""
    helm, kustomize = bundle.spec.helm, bundle.spec.kustomize
    if kustomize is not None:
        return {
            "repo": source_url(kustomize),
            "chart": f"kustomize:{kustomize.path or '.'}",
            "version": source_revision(kustomize),
        }
    return {
        "repo": helm.repo if helm is not None else None,
        "chart": helm.chart if helm is not None else None,
        "version": helm.version if helm is not None else None,
    }


def bundle_detail(model: FleetModel, key: str) -> dict[str, Any] | None:
    bundle = model.bundle(key)
    if bundle is None:
        return None
    workspace = bundle.metadata.namespace or ""
    clusters = model.clusters_in(workspace)
    groups = model.groups(workspace)
    placements = model.placements_of_bundle(key)
    status = bundle.status
    display = status.display if status is not None else None
    state = display.state if display is not None else None
    return {
        "key": key,
        "namespace": workspace,
        "name": bundle.metadata.name,
        "generation": bundle.metadata.generation,
        "paused": bundle.spec.paused,
        "state": state.value if state is not None else "",
        "ready": display.readyClusters if display is not None else "",
        "chart": {
            **_content(bundle),
            "resolvedVersion": status.resolvedVersion if status is not None else None,
        },
        "images": _dumped(status.resolvedImages if status is not None else []),
        "conditions": _conditions(status.conditions if status is not None else []),
        "nonReady": _dumped(status.nonReady if status is not None else []),
        "summary": status.summary.model_dump() if status is not None and status.summary else {},
        "references": missing_references(
            bundle, groups, [b.metadata.name for b in model.bundles_in(workspace)]
        ),
        "targets": _targets(bundle, clusters, groups),
        "rollout": _rollout(bundle, clusters, groups, placements),
        "clusters": [_placement_row(c, placements[key_of(c)]) for c in clusters
                     if key_of(c) in placements],
        "actions": {
            "resumeRollout": state in HALTED,
            "allowDeletion": state is DisplayState.DELETION_HELD,
            "annotations": {
                name: bundle.metadata.annotations[name]
                for name in (RESUME, ALLOW_DELETION)
                if name in bundle.metadata.annotations
            },
        },
    }  # fmt: skip


def deployment_detail(
    model: FleetModel, bundle_key: str, cluster_key: str
) -> dict[str, Any] | None:
    """One cluster of a Bundle: explain's verdict, the rendered values, what changed."""
    bundle, cluster = model.bundle(bundle_key), model.cluster(cluster_key)
    if bundle is None or cluster is None:
        return None
    groups = model.groups(cluster.metadata.namespace or "")
    decision = match_targets(bundle, cluster, groups)
    workspace_groups = frozenset(g.metadata.name for g in groups)
    explanation = Explanation(
        bundle,
        cluster,
        tuple(g.metadata.name for g in groups_of(cluster, groups)),
        decision,
        None,
        None,
        None,
        workspace_groups,
    )
    bd = model.deployment(bundle_key, cluster_key)
    placement = model.placements_of_bundle(bundle_key).get(cluster_key)
    detail: dict[str, Any] = {
        "bundle": bundle_key,
        "cluster": cluster_key,
        "verdict": verdict(explanation),
        "targets": target_lines(explanation),
        "state": placement.state.value if placement is not None else "",
        "message": placement.message if placement is not None else "",
    }
    if bd is not None:
        detail.update(_deployment(bd))
    return detail


def cluster_detail(model: FleetModel, key: str) -> dict[str, Any] | None:
    cluster = model.cluster(key)
    if cluster is None:
        return None
    groups = model.groups(cluster.metadata.namespace or "")
    status = cluster.status
    agent = status.agent if status is not None else None
    conditions = status.conditions if status is not None else []
    by_type = {c.type: c for c in conditions}
    placements = model.placements_of_cluster(key)
    return {
        **cluster_entry(cluster),
        "annotations": dict(cluster.metadata.annotations),
        "agentMode": cluster.spec.agentMode.value,
        "groups": [g.metadata.name for g in groups_of(cluster, groups)],
        "agent": agent.model_dump(exclude_none=True) if agent is not None else {},
        "bootstrap": [
            _conditions([by_type[phase]])[0] if phase in by_type else {"type": phase}
            for phase in BOOTSTRAP_PHASES
        ],
        "conditions": _conditions(conditions),
        "bundles": [
            {"bundle": b, **_placement_fields(p), **_release(model.deployment(b, key))}
            for b, p in sorted(placements.items())
        ],
    }


def _targets(
    bundle: Bundle, clusters: Sequence[Cluster], groups: Sequence[ClusterGroup]
) -> list[dict[str, Any]]:
    """Each target and the clusters it decides for (FirstMatch: the first matching target;
    AllMatches: every matching one), with doNotDeploy targets naming what they keep off."""
    picked: list[list[str]] = [[] for _ in bundle.spec.targets]
    for cluster in clusters:
        for result in match_targets(bundle, cluster, groups).contributing:
            picked[result.index].append(cluster.metadata.name)
    return [
        {
            "label": target.name or f"targets[{index}]",
            "criteria": _criteria(target),
            "doNotDeploy": target.doNotDeploy,
            "count": len(names),
            "clusters": names[:TARGET_CLUSTERS_LISTED],
        }
        for index, (target, names) in enumerate(zip(bundle.spec.targets, picked, strict=True))
    ]


def _criteria(target: BundleTarget) -> str:
    shown = target.model_dump(
        include={"clusterName", "clusterSelector", "clusterGroup", "clusterGroupSelector"},
        exclude_none=True,
    )
    return json.dumps(shown, separators=(", ", ": ")) if shown else "(no criteria: matches nothing)"


def _rollout(
    bundle: Bundle,
    clusters: Sequence[Cluster],
    groups: Sequence[ClusterGroup],
    placements: dict[str, Placement],
) -> dict[str, Any]:
    """The partitions as the manager cuts them (targets in cluster name order), each with how
    many clusters run the newest deployment, how many are unavailable, and its budget."""
    strategy = bundle.spec.rolloutStrategy or RolloutStrategy()
    targets = [
        RolloutTarget(c, _desired_id(p.deployment), p.deployment, is_offline(c))
        for c in clusters
        if (p := placements.get(key_of(c))) is not None
    ]
    partitions = split_partitions(strategy, targets, groups)
    ignore_offline = strategy.offlineClusters is not OfflineClusters.BLOCK
    return {
        "maxUnavailable": resolve_int_or_percent(
            strategy.maxUnavailable, len(targets), DEFAULT_MAX_UNAVAILABLE
        ),
        "maxUnavailablePartitions": resolve_int_or_percent(
            strategy.maxUnavailablePartitions, len(partitions), DEFAULT_MAX_UNAVAILABLE_PARTITIONS
        ),
        "partitions": [
            {
                "name": p.name,
                "total": len(p.targets),
                "maxUnavailable": p.max_unavailable,
                "updated": sum(1 for t in p.targets if _updated(t.current)),
                "unavailable": sum(
                    1
                    for t in p.targets
                    if t.current is not None
                    and not (ignore_offline and t.offline)
                    and is_unavailable(t.current)
                ),
                "pending": sum(1 for t in p.targets if t.current is None),
                "offline": sum(1 for t in p.targets if t.offline),
            }
            for p in partitions
        ],
    }


def _desired_id(bd: BundleDeployment | None) -> str:
    if bd is None:
        return ""
    return bd.spec.stagedDeploymentID or bd.spec.deploymentID


def _updated(bd: BundleDeployment | None) -> bool:
    """Runs its newest deployment, Ready: nothing staged, applied, ready."""
    if bd is None or is_unavailable(bd):
        return False
    staged = bd.spec.stagedDeploymentID
    return staged is None or staged == bd.spec.deploymentID


def _placement_row(cluster: Cluster, placement: Placement) -> dict[str, Any]:
    return {
        "cluster": key_of(cluster),
        "name": cluster.metadata.name,
        **_placement_fields(placement),
        **_release(placement.deployment),
    }


def _placement_fields(placement: Placement) -> dict[str, Any]:
    return {"state": placement.state.value, "message": placement.message}


def _release(bd: BundleDeployment | None) -> dict[str, Any]:
    if bd is None:
        return {}
    release = bd.status.release if bd.status is not None else None
    staged = bd.spec.stagedDeploymentID
    return {
        "version": (release.chartVersion if release is not None else None) or "",
        "wanted": content_version(bd.spec.options) or "",
        "staged": staged is not None and staged != bd.spec.deploymentID,
    }


def _deployment(bd: BundleDeployment) -> dict[str, Any]:
    options = bd.spec.options
    changes: dict[str, Any] = {}
    if bd.spec.stagedOptions is not None and bd.spec.stagedDeploymentID != bd.spec.deploymentID:
        changes["staged"] = _diff(options, bd.spec.stagedOptions)
    if bd.spec.lastReady is not None and bd.spec.lastReady.deploymentID != bd.spec.deploymentID:
        changes["lastChange"] = _diff(bd.spec.lastReady.options, options)
    status = bd.status
    return {
        "deployment": key_of(bd),
        "deploymentID": bd.spec.deploymentID,
        "version": content_version(options) or "",
        "releaseName": options.helm.releaseName or "" if options.helm is not None else "",
        "releaseNamespace": options.namespace,
        "values": yamldump.dump(_values(options)),
        "changes": changes,
        "release": status.release.model_dump(exclude_none=True)
        if status is not None and status.release is not None
        else {},
        "deploymentConditions": _conditions(status.conditions if status is not None else []),
    }


def _values(options: DeploymentOptions) -> dict[str, Any]:
    """The per-cluster data the deployment carries: Helm values, or Kustomize substitutions."""
    if options.helm is not None:
        return options.helm.values or {}
    post_build = options.kustomize.postBuild if options.kustomize is not None else None
    return dict(post_build.substitute or {}) if post_build is not None else {}


def _diff(old: DeploymentOptions, new: DeploymentOptions) -> list[str]:
    """`path: old -> new` lines between two options (maps by key, lists by item)."""
    before = old.model_dump(mode="json", exclude_none=True)
    after = new.model_dump(mode="json", exclude_none=True)
    return [change.describe() for change in diff_values(before, after)]


def _dumped(models: Sequence[BaseModel]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", exclude_none=True) for m in models]


def _conditions(conditions: Sequence[Condition]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json", exclude_none=True) for c in conditions]
