"""Explain: for one bundle and one cluster, why it deploys (or not) and what it would run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.core.planning import ResolvedVersions, merged_helm, render_options
from bundler.core.targeting import TargetDecision, groups_of, match_targets
from bundler.errors import TemplateError


@dataclass(frozen=True)
class Explanation:
    bundle: Bundle
    cluster: Cluster
    groups: tuple[str, ...]
    decision: TargetDecision
    merged: dict[str, Any] | None
    options: DeploymentOptions | None
    error: str | None


def explain(
    bundle: Bundle,
    cluster: Cluster,
    groups: Sequence[ClusterGroup],
    resolved: ResolvedVersions | None = None,
) -> Explanation:
    decision = match_targets(bundle, cluster, groups)
    group_names = tuple(g.metadata.name for g in groups_of(cluster, groups))
    if not decision.deploy:
        return Explanation(bundle, cluster, group_names, decision, None, None, None)
    merged = merged_helm(bundle, decision)
    try:
        options = render_options(bundle, cluster, decision, resolved or {})
    except TemplateError as err:
        return Explanation(bundle, cluster, group_names, decision, merged, None, str(err))
    return Explanation(bundle, cluster, group_names, decision, merged, options, None)


def verdict(exp: Explanation) -> str:
    """One line: deploys through which targets, or why not."""
    b, c = exp.bundle.metadata, exp.cluster.metadata
    if c.namespace != b.namespace:
        return (
            f"not deployed: cluster is in workspace {c.namespace!r}, the bundle in {b.namespace!r}"
        )
    if not exp.bundle.spec.targets:
        return "not deployed: the bundle has no targets"
    if exp.decision.excluded_by is not None:
        return f"not deployed: target {exp.decision.excluded_by.label} matches with doNotDeploy"
    if not exp.decision.contributing:
        return "not deployed: no target matches"
    names = ", ".join(r.label for r in exp.decision.contributing)
    if exp.error is not None:
        return f"targeted by {names}, but rendering failed: {exp.error}"
    return f"deployed by {names}"


def target_lines(exp: Explanation) -> list[str]:
    """One line per target: matched, or the first criterion that failed."""
    lines = []
    for r in exp.decision.results:
        state = "matches" if r.matched else f"does not match ({r.failed.value if r.failed else ''})"
        extra = " [doNotDeploy]" if r.target.doNotDeploy else ""
        lines.append(f"{r.label}: {state}{extra}")
    return lines
