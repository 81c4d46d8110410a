"""Explain: for one bundle and one cluster, why it deploys (or not) and what it would run.

A cluster that may receive nothing yet (a Cluster API import gate: control plane not initialized,
kubeconfig Secret missing; or a name that cannot be a label value) is said to be held, and why,
while each target is still listed with whether its criteria match, so the user sees what will
happen once the gate opens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bundler.api.bundle import Bundle, TargetMode
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.core.capi_import import gate_message, is_gated
from bundler.core.planning import merged_content, plan_decided
from bundler.core.planning.decide import decide_cluster
from bundler.core.planning.inputs import PassInputs
from bundler.core.targeting import (
    Criterion,
    TargetDecision,
    TargetResult,
    evaluate_targets,
    groups_of,
    missing_references,
)
from bundler.core.templating.templater import IN_PROCESS, Templater
from bundler.core.validation import cluster_name_problem


@dataclass(frozen=True)
class Explanation:
    bundle: Bundle
    cluster: Cluster
    groups: tuple[str, ...]
    decision: TargetDecision
    merged: dict[str, Any] | None
    options: DeploymentOptions | None
    error: str | None
    # the ClusterGroups of the bundle's workspace
    workspace_groups: frozenset[str] = frozenset()
    # clusterGroups and dependsOn of the bundle that name nothing in its workspace
    missing: tuple[str, ...] = ()
    # why the cluster may receive nothing yet (an import gate, an invalid name), if it may not
    held: str | None = None


def explain(
    bundle: Bundle,
    cluster: Cluster,
    groups: Sequence[ClusterGroup],
    inputs: PassInputs | None = None,
    bundle_names: Iterable[str] = (),
    bundle_labels: Mapping[str, Mapping[str, str]] | None = None,
    templater: Templater = IN_PROCESS,
) -> Explanation:
    """`inputs`: what the planning pass resolved for the cluster (bundler.core.planning.
    bundle_pass; None: nothing, as offline); `bundle_names`: the Bundles of the bundle's
    workspace, to check its dependsOn; `bundle_labels` their labels, to check its dependsOn
    selectors."""
    decided = decide_cluster(bundle, cluster, groups)
    decision = decided.decision
    held = _held(cluster)
    if held is not None and cluster.metadata.namespace == bundle.metadata.namespace:
        # Nothing deploys, but each target's criteria are still worth showing.
        listed = evaluate_targets(bundle, cluster, groups)
        decision = TargetDecision(listed.results, (), None)
    group_names = tuple(g.metadata.name for g in groups_of(cluster, groups))
    missing = tuple(missing_references(bundle, groups, bundle_names, bundle_labels))
    ours = frozenset(
        g.metadata.name for g in groups if g.metadata.namespace == cluster.metadata.namespace
    )
    merged, options, error = None, None, None
    if decision.deploy:
        merged = merged_content(bundle, decision)
        plan = plan_decided(bundle, [decided], inputs or PassInputs(), templater)
        options = plan.deployments[0].options if plan.deployments else None
        error = plan.errors[0].message if plan.errors else None
    return Explanation(
        bundle, cluster, group_names, decision, merged, options, error, ours, missing, held
    )


def _held(cluster: Cluster) -> str | None:
    if problem := cluster_name_problem(cluster):
        return f"InvalidName: {problem}"
    if gate := is_gated(cluster):
        return f"the cluster is gated: {gate}: {gate_message(gate, cluster)}"
    return None


def verdict(exp: Explanation) -> str:
    """One line: deploys through which targets, or why not."""
    b, c = exp.bundle.metadata, exp.cluster.metadata
    if c.namespace != b.namespace:
        return (
            f"not deployed: cluster is in workspace {c.namespace!r}, the bundle in {b.namespace!r}"
        )
    if exp.held is not None:
        matching = [r.label for r in exp.decision.results if r.matched]
        if exp.bundle.spec.targetMode is TargetMode.FIRST_MATCH:
            matching = matching[:1]
        then = f"; once it opens: {_once_open(exp, matching)}" if exp.bundle.spec.targets else ""
        return f"not deployed: {exp.held}{then}"
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


def _once_open(exp: Explanation, matching: list[str]) -> str:
    if not matching:
        return "no target matches"
    return f"target {', '.join(matching)} matches"


def target_lines(exp: Explanation) -> list[str]:
    """One line per target: matched, or the first criterion that failed."""
    lines = []
    for r in exp.decision.results:
        extra = " [doNotDeploy]" if r.target.doNotDeploy else ""
        lines.append(f"{r.label}: {target_state(exp, r)}{extra}")
    return lines


def target_state(exp: Explanation, result: TargetResult) -> str:
    """`matches`, or `does not match (criterion)`, saying so when the named group does not exist."""
    if result.failed is None:
        return "matches"
    why = result.failed.value
    name = result.target.clusterGroup
    if result.failed is Criterion.CLUSTER_GROUP and name and name not in exp.workspace_groups:
        why += f": ClusterGroup {exp.cluster.metadata.namespace}/{name} does not exist"
    return f"does not match ({why})"
