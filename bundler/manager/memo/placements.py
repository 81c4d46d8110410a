"""Placements (bundle x cluster, with its deployment, liveness and template error) as the status
roll-ups of bundler.core.summary need them, read from the informer indexes and the outcomes.

For a Bundle whose last pass planned it, its placements are the clusters it targets. For a Bundle
that was rejected, which clusters it targets is unknown, so its placements are the clusters where
it still has a BundleDeployment (they stay as they are while it is invalid). A Bundle being deleted
targets nothing.
"""

from __future__ import annotations

from functools import partial

from bundler.api.cluster import Cluster
from bundler.core.naming import cluster_namespace
from bundler.core.planning import key as ref
from bundler.core.summary import PausedBy, Placement, paused_by
from bundler.manager.context import Context, split_ref
from bundler.manager.memo.outcomes import Outcome
from bundler.manager.observed.scope import Scope
from bundler.manager.work import Stage
from bundler.runtime.key import Key

_CREATIONS = "creations:{}"
_CREATIONS_IN = "creations-in:{}"


def awaiting_plans(ctx: Context, scope: Scope, workspace: str, stage: Stage, key: Key) -> bool:
    """Whether some Bundle of the workspace has no plan yet (just started, or just leading).

    A cluster's placements are only known once every bundle is planned; rolling up before that
    would write a status that the plans then correct. The roll-up is deferred until they are.
    """
    missing = _unplanned(ctx, scope, workspace)
    if not missing:
        return False
    ctx.work.defer(missing, stage, key)
    # A plan recorded between the check and the deferral released nothing: look again.
    return bool(_unplanned(ctx, scope, workspace))


def awaiting_creations(ctx: Context, stage: Stage, key: Key, bundle: str | None = None) -> bool:
    """Whether a rollout still creates deployments that change this roll-up: the Bundle's own
    (`bundle`), or any of the workspace's (a Cluster's or a group's). The roll-up is deferred
    until those creations are done (bundler.manager.memo.continuation) and in the cache
    (bundler.manager.memo.own_writes)."""
    if bundle is None:
        event = _CREATIONS_IN.format(key.namespace)
        creating = partial(_creating_in, ctx, key.namespace)
    else:
        event, creating = _CREATIONS.format(bundle), partial(_creating, ctx, bundle)
    if not creating():
        return False
    ctx.work.defer((event,), stage, key)
    # The creations may have ended between the check and the deferral: look again.
    return creating()


def release_creations(ctx: Context, bundle: str) -> None:
    """After a pass of `bundle`, or a write of it shown: the roll-ups deferred until its
    creations are done run."""
    if not _creating(ctx, bundle):
        ctx.work.release(_CREATIONS.format(bundle))
    workspace = split_ref(bundle).namespace
    if not _creating_in(ctx, workspace):
        ctx.work.release(_CREATIONS_IN.format(workspace))


def _creating(ctx: Context, bundle: str) -> bool:
    """A pass of the Bundle creates deployments, has some left, or the cache lags its writes."""
    return ctx.continuations.creating(bundle) or ctx.own_writes.awaiting(bundle)


def _creating_in(ctx: Context, workspace: str) -> bool:
    return ctx.continuations.creating_in(workspace) or ctx.own_writes.awaiting_in(workspace)


def _unplanned(ctx: Context, scope: Scope, workspace: str) -> list[str]:
    refs = (ref(k.namespace, k.name) for k in scope.keys_in(scope.bundles, workspace))
    return [bundle for bundle in refs if ctx.outcomes.get(bundle) is None]


def is_offline(ctx: Context, scope: Scope, cluster: Cluster) -> bool:
    key = Key(cluster.metadata.namespace or "", cluster.metadata.name)
    return ctx.liveness.offline(cluster, scope.check_ins.get(key))


def of_bundle(ctx: Context, scope: Scope, bundle: str, outcome: Outcome) -> list[Placement]:
    deployments = scope.deployment_models.of_bundle(bundle)
    clusters = outcome.targeted if outcome.targeted is not None else deployments.keys()
    placements = []
    for cluster_ref in sorted(clusters):
        key = split_ref(cluster_ref)
        cluster = scope.cluster_models.get(key.namespace, key.name)
        offline = cluster is not None and is_offline(ctx, scope, cluster)
        placements.append(
            Placement(
                bundle,
                cluster_ref,
                deployments.get(cluster_ref),
                offline,
                outcome.errors.get(cluster_ref),
                _paused(outcome, cluster),
                outcome.holds.get(cluster_ref),
            )
        )
    return placements


def of_bundle_on(
    ctx: Context, scope: Scope, bundle: str, cluster_ref: str, outcome: Outcome
) -> Placement:
    """The placement of `bundle` on one cluster, as `of_bundle` lists it."""
    key = split_ref(cluster_ref)
    here = scope.deployment_models.in_namespace(cluster_namespace(key.namespace, key.name))
    cluster = scope.cluster_models.get(key.namespace, key.name)
    offline = cluster is not None and is_offline(ctx, scope, cluster)
    return Placement(
        bundle,
        cluster_ref,
        here.get(bundle),
        offline,
        outcome.errors.get(cluster_ref),
        _paused(outcome, cluster),
        outcome.holds.get(cluster_ref),
    )


def _paused(outcome: Outcome | None, cluster: Cluster | None) -> PausedBy | None:
    bundle_paused = outcome is not None and outcome.paused
    return paused_by(bundle_paused, cluster is not None and cluster.spec.paused)


def of_cluster(ctx: Context, scope: Scope, cluster: Cluster, offline: bool) -> list[Placement]:
    workspace = cluster.metadata.namespace or ""
    cluster_ref = ref(workspace, cluster.metadata.name)
    here = scope.deployment_models.in_namespace(cluster_namespace(workspace, cluster.metadata.name))
    placements = []
    for bundle_key in sorted(scope.keys_in(scope.bundles, workspace)):
        bundle = ref(bundle_key.namespace, bundle_key.name)
        outcome = ctx.outcomes.get(bundle)
        paused = _paused(outcome, cluster)
        if outcome is not None and outcome.targeted is not None:
            targeted, error, _, gated = outcome.placement(cluster_ref)
            if targeted:
                placements.append(
                    Placement(bundle, cluster_ref, here.get(bundle), offline, error, paused, gated)
                )
        elif bundle in here:
            placements.append(Placement(bundle, cluster_ref, here[bundle], offline, None, paused))
    return placements
