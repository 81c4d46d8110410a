"""The status controllers: Bundle, Cluster and ClusterGroup status rolled up from deployments.

Each computes the status with bundler.core.summary from the informer indexes and the bundle
outcomes (a Cluster's `status.namespace` too, once its namespace is ready: one write for both),
and merge-patches only the fields the manager owns, only when they differ from what the
informer shows (conditions keep their lastTransitionTime while unchanged, so an unchanged world
compares equal and costs no request). A Cluster's `status.agent` is the agent's and is never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel, ValidationError

from bundler.api.cluster import AgentFluxStatus, Cluster
from bundler.api.images import ResolvedImage
from bundler.api.meta import Condition
from bundler.api.resources import BUNDLE, CLUSTER, CLUSTER_GROUP
from bundler.api.summary import DeploymentState
from bundler.core.capi_import import gate_message, is_gated
from bundler.core.events import bundle_events, cluster_events
from bundler.core.naming import cluster_namespace
from bundler.core.planning import key as ref
from bundler.core.selectors import selector_matches
from bundler.core.state import ConditionType, condition
from bundler.core.summary import (
    cluster_group_status,
    cluster_status,
    flux_supported_condition,
    with_ready,
)
from bundler.core.validation import cluster_name_problem
from bundler.core.versions import is_exact_version
from bundler.manager import placements
from bundler.manager.context import Context, split_ref
from bundler.manager.image_status import images_condition
from bundler.manager.scope import Scope
from bundler.manager.work import Stage
from bundler.manager.writes import is_deleting, patch_status_if_changed
from bundler.runtime.controller import Result
from bundler.runtime.key import Key
from bundler.store.protocol import Obj

BUNDLE_FIELDS = (
    "observedGeneration",
    "resolvedVersion",
    "resolvedImages",
    "summary",
    "display",
    "nonReady",
    "conditions",
)
CLUSTER_FIELDS = ("namespace", "summary", "display", "nonReadyBundles", "conditions")
GROUP_FIELDS = (
    "clusterCount",
    "nonReadyClusterCount",
    "nonReadyClusters",
    "summary",
    "display",
    "conditions",
)


def owned(status: BaseModel, fields: Sequence[str]) -> dict[str, Any]:
    """The `fields` of a status model as JSON; unset ones as None, so a patch removes them."""
    wire = status.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {name: wire.get(name) for name in fields}


def previous_conditions(observed: Obj) -> list[Condition]:
    conditions = []
    for raw in (observed.get("status") or {}).get("conditions") or []:
        try:
            conditions.append(Condition.model_validate(raw))
        except ValidationError:
            continue
    return conditions


class BundleStatusController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def reconcile(self, key: Key) -> None:
        scope = self.ctx.scopes.of(key.namespace)
        observed = scope.bundles.get(key.namespace, key.name) if scope else None
        bundle = ref(key.namespace, key.name)
        outcome = self.ctx.outcomes.get(bundle)
        if scope is None or observed is None or is_deleting(observed) or outcome is None:
            return
        if placements.awaiting_creations(self.ctx, Stage.BUNDLE_STATUS, key, bundle):
            return
        previous = previous_conditions(observed)
        now = self.ctx.now_iso()
        resolved = outcome.resolved_version
        images = [] if outcome.images is None else list(outcome.images.resolved)
        if outcome.rejection is not None:
            resolved = (observed.get("status") or {}).get("resolvedVersion")
            images = _observed_images(observed)
        tally = self.ctx.tallies.tally(
            bundle,
            outcome,
            partial(placements.of_bundle, self.ctx, scope, bundle, outcome),
            partial(placements.of_bundle_on, self.ctx, scope, bundle, outcome=outcome),
        )
        status = tally.bundle_status(
            observed_generation=outcome.generation,
            resolved_version=resolved,
            previous=previous,
            now=now,
            version=_exact_version(observed),
            paused=outcome.paused,
        )
        why = outcome.rejection or outcome.deletion_held or outcome.halted or outcome.blocked
        if why is not None:
            status = with_ready(status, why.reason, why.message, now, previous)
        conditions = references_condition(status.conditions, outcome.missing, now, previous)
        if outcome.rejection is None:
            conditions = images_condition(conditions, outcome.images, now, previous)
        # Absent rather than empty for a Bundle without images: its status stays as it was.
        listed = images or None
        status = status.model_copy(update={"conditions": conditions, "resolvedImages": listed})
        if patch_status_if_changed(self.ctx.store, BUNDLE, observed, owned(status, BUNDLE_FIELDS)):
            seen = (observed.get("status") or {}).get("observedGeneration")
            targeted = status.summary.desiredReady if status.summary is not None else 0
            events = bundle_events(
                previous,
                status.conditions,
                observed_generation=seen if isinstance(seen, int) else None,
                generation=status.observedGeneration,
                targeted=targeted,
            )
            self.ctx.events.tell(observed, events)


def _exact_version(observed: Obj) -> str | None:
    """The Bundle's spec.helm.version when it is an exact version (the VERSION column)."""
    helm = (observed.get("spec") or {}).get("helm") or {}
    version = helm.get("version") if isinstance(helm, dict) else None
    return version if isinstance(version, str) and is_exact_version(version) else None


def _observed_images(observed: Obj) -> list[ResolvedImage]:
    """The `status.resolvedImages` a Bundle shows (kept while it is rejected); unreadable: none."""
    try:
        raw = (observed.get("status") or {}).get("resolvedImages") or []
        return [ResolvedImage.model_validate(image) for image in raw]
    except (ValidationError, TypeError):
        return []


REASON_REFERENCE_NOT_FOUND = "ReferenceNotFound"


def references_condition(
    conditions: Sequence[Condition], missing: Sequence[str], now: str, previous: Sequence[Condition]
) -> list[Condition]:
    """`conditions` with References=False naming what is missing, or without it when nothing is:
    a missing group or dependency is allowed (it may come later), but never silent."""
    kind = ConditionType.REFERENCES.value
    kept = [c for c in conditions if c.type != kind]
    if not missing:
        return kept
    old = [c for c in previous if c.type == kind]
    message = "; ".join(missing)
    return condition(kind, False, REASON_REFERENCE_NOT_FOUND, message, now, [*kept, *old])


REASON_INVALID_NAME = "InvalidName"


def _not_ready_cluster(cluster: Cluster, offline: bool, seen: str | None) -> tuple[str, str] | None:
    """Why the Cluster itself is not Ready, whatever its bundles say: an import gate holds it
    back, or its agent has stopped checking in (also when it runs no bundle)."""
    if problem := cluster_name_problem(cluster):
        return REASON_INVALID_NAME, problem
    if gate := is_gated(cluster):
        return gate, gate_message(gate, cluster)
    if offline:
        since = f"since {seen}" if seen else "since the Cluster was registered"
        return DeploymentState.OFFLINE.value, f"the agent has not checked in {since}"
    return None


def _agent_flux(observed: Obj) -> AgentFluxStatus | None:
    """What the agent last found of its Flux (the models leave status out); None when it has
    not looked, or wrote something unreadable."""
    found = ((observed.get("status") or {}).get("agent") or {}).get("flux")
    if not isinstance(found, dict):
        return None
    try:
        return AgentFluxStatus.model_validate(found)
    except ValidationError:
        return None


def _namespace_shown(scope: Scope, key: Key, observed: Obj) -> str | None:
    """The cluster namespace once it is ready; until then what the status shows (a namespace
    being created again after a namesake Cluster's deletion stays shown)."""
    namespace = cluster_namespace(key.namespace, key.name)
    if scope.namespace_ready(namespace):
        return namespace
    shown = (observed.get("status") or {}).get("namespace")
    return shown if isinstance(shown, str) else None


class ClusterStatusController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def reconcile(self, key: Key) -> Result | None:
        scope = self.ctx.scopes.of(key.namespace)
        cluster_ref = ref(key.namespace, key.name)
        observed = scope.clusters.get(key.namespace, key.name) if scope else None
        cluster = scope.cluster_models.get(key.namespace, key.name) if scope else None
        if scope is None or observed is None or cluster is None or is_deleting(observed):
            self.ctx.liveness.forget(cluster_ref)
            return None
        seen = scope.check_ins.get(key)
        offline = self.ctx.liveness.offline(cluster, seen)
        if self.ctx.liveness.record(cluster_ref, offline):
            self._wake_viewers(key)
        until = self.ctx.liveness.seconds_until_offline(cluster, seen)
        requeue = Result(requeue_after=until) if until is not None else None
        if placements.awaiting_plans(self.ctx, scope, key.namespace, Stage.CLUSTER_STATUS, key):
            return requeue
        if placements.awaiting_creations(self.ctx, Stage.CLUSTER_STATUS, key):
            return requeue
        status = cluster_status(
            placements.of_cluster(self.ctx, scope, cluster, offline),
            namespace=_namespace_shown(scope, key, observed),
            agent=None,
            previous=previous_conditions(observed),
            now=self.ctx.now_iso(),
            paused=cluster.spec.paused,
        )
        if held := _not_ready_cluster(cluster, offline, seen):
            # The cluster's own trouble replaces the roll-up's Ready; the observed condition
            # keeps its lastTransitionTime while nothing changes.
            reason, message = held
            previous = previous_conditions(observed)
            status = with_ready(status, reason, message, self.ctx.now_iso(), previous)
        if flux := _agent_flux(observed):
            conditions = flux_supported_condition(status.conditions, flux, self.ctx.now_iso())
            status = status.model_copy(update={"conditions": conditions})
        if patch_status_if_changed(
            self.ctx.store, CLUSTER, observed, owned(status, CLUSTER_FIELDS)
        ):
            events = cluster_events(previous_conditions(observed), status.conditions)
            self.ctx.events.tell(observed, events)
        return requeue

    def _wake_viewers(self, key: Key) -> None:
        """The cluster went on- or offline: the bundles placed on it and its groups must show it,
        and the bundles whose rollout holds clusters back must decide again."""
        scope = self.ctx.scopes.of(key.namespace)
        assert scope is not None
        here = scope.deployment_models.in_namespace(cluster_namespace(key.namespace, key.name))
        cluster_ref = ref(key.namespace, key.name)
        for bundle_key in scope.keys_in(scope.bundles, key.namespace):
            # Also where no deployment is created yet: the next roll-up shows it offline.
            self.ctx.tallies.touch(ref(bundle_key.namespace, bundle_key.name), cluster_ref)
        self.ctx.work.add_all(Stage.BUNDLE_STATUS, (split_ref(b) for b in here))
        # An offline cluster takes no room in a rollout's budgets: held rollouts decide again.
        held = [b for b in here if (o := self.ctx.outcomes.get(b)) is not None and o.held]
        for bundle in held:
            self.ctx.continuations.invalidate(bundle)
        self.ctx.work.add_all(Stage.BUNDLE, (split_ref(b) for b in held))
        self.ctx.work.add_all(Stage.GROUP_STATUS, self.ctx.groups_of(scope, key))


class GroupStatusController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def reconcile(self, key: Key) -> None:
        scope = self.ctx.scopes.of(key.namespace)
        observed = scope.groups.get(key.namespace, key.name) if scope else None
        group = scope.group_models.get(key.namespace, key.name) if scope else None
        if scope is None or observed is None or group is None or is_deleting(observed):
            return
        if placements.awaiting_plans(self.ctx, scope, key.namespace, Stage.GROUP_STATUS, key):
            return
        if placements.awaiting_creations(self.ctx, Stage.GROUP_STATUS, key):
            return
        members = [
            c
            for c in scope.live_clusters(key.namespace)
            if selector_matches(group.spec.selector, c.metadata.labels)
        ]
        on_members = [
            p
            for c in members
            for p in placements.of_cluster(
                self.ctx, scope, c, placements.is_offline(self.ctx, scope, c)
            )
        ]
        status = cluster_group_status(
            [ref(c.metadata.namespace, c.metadata.name) for c in members],
            on_members,
            previous=previous_conditions(observed),
            now=self.ctx.now_iso(),
        )
        patch_status_if_changed(
            self.ctx.store, CLUSTER_GROUP, observed, owned(status, GROUP_FIELDS)
        )
