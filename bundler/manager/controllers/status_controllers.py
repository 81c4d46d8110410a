"""The status controllers: Bundle, Cluster and ClusterGroup status rolled up from deployments.

Each computes the status with bundler.core.summary from the informer indexes and the bundle
outcomes (a Cluster's `status.namespace` too, once its namespace is ready: one write for both),
and merge-patches only the fields the manager owns, only when they differ from what the
informer shows (conditions keep their lastTransitionTime while unchanged, so an unchanged world
compares equal and costs no request). A Cluster's `status.agent` is the agent's and is never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial

from pydantic import ValidationError

from bundler.api.bundle import RolloutStatus
from bundler.api.cluster import AgentFluxStatus, Cluster
from bundler.api.images import ResolvedImage
from bundler.api.meta import Condition
from bundler.api.resources import BUNDLE, CLUSTER, CLUSTER_GROUP
from bundler.api.schedule import ScheduleStatus
from bundler.api.summary import DeploymentState, DisplayState
from bundler.core.capi_import import gate_message, is_gated
from bundler.core.events import bundle_events, cluster_events
from bundler.core.naming import cluster_namespace
from bundler.core.planning import key as ref
from bundler.core.rollout_gates import Gate, GateReason
from bundler.core.schedule import next_edge, schedule_status
from bundler.core.state import ConditionType, condition
from bundler.core.summary import (
    cluster_status,
    flux_supported_condition,
    with_ready,
)
from bundler.core.validation import cluster_name_problem
from bundler.core.versions import is_exact_version
from bundler.errors import InvalidInputError
from bundler.manager.context import Context, split_ref
from bundler.manager.controllers import rollout_gates
from bundler.manager.controllers.image_status import images_condition
from bundler.manager.memo import placements
from bundler.manager.memo.group_members import GroupMembers
from bundler.manager.observed.scope import Scope
from bundler.manager.owned_status import BUNDLE_FIELDS, CLUSTER_FIELDS, GROUP_FIELDS, owned
from bundler.manager.work import Stage
from bundler.manager.writes import is_deleting, patch_status_if_changed
from bundler.runtime.controller import Result
from bundler.runtime.key import Key
from bundler.store.protocol import Obj

# The Ready reasons of a roll-up whose not-ready clusters a rollout gate may explain: staged or
# not created, or held at a gate.
_GATEABLE = frozenset(
    {
        DeploymentState.OUT_OF_SYNC.value,
        DeploymentState.PENDING.value,
        *(reason.value for reason in GateReason),
    }
)


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
        observed = scope.bundles.shared(key.namespace, key.name) if scope else None
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
        rollout, schedule = outcome.rollout, outcome.schedule
        if outcome.rejection is not None:
            resolved = (observed.get("status") or {}).get("resolvedVersion")
            images = _observed_images(observed)
            # The partitions' memory (readySince, baked) outlives a rejected spec.
            rollout, schedule = _observed_gates(observed)
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
        gate = outcome.gate if outcome.rejection is None else None
        if why is not None:
            status = with_ready(status, why.reason, why.message, now, previous)
        elif gate is not None and _ready_reason(status.conditions) in _GATEABLE:
            # Every cluster not Ready waits for its new deployment: the gate says why.
            status = with_ready(status, gate.reason.value, gate.message, now, previous)
        conditions = references_condition(status.conditions, outcome.missing, now, previous)
        conditions = gated_condition(conditions, gate, now, previous)
        if outcome.rejection is None:
            conditions = images_condition(conditions, outcome.images, now, previous)
        # Absent rather than empty for a Bundle without images: its status stays as it was.
        listed = images or None
        assert status.display is not None
        display = status.display.model_copy(update={"gate": None if gate is None else gate.display})
        status = status.model_copy(
            update={
                "conditions": conditions,
                "resolvedImages": listed,
                "rollout": rollout,
                "schedule": schedule,
                "display": display,
            }
        )
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
    """The Bundle's spec.helm.version (or its OCI artifact's tag or version) when it is an
    exact version (the VERSION column)."""
    spec = observed.get("spec") or {}
    helm = spec.get("helm") or {}
    version = helm.get("version") if isinstance(helm, dict) else None
    kustomize = spec.get("kustomize")
    if isinstance(kustomize, dict):
        oci = (kustomize.get("source") or {}).get("oci") or {}
        version = oci.get("tag") or oci.get("version") if isinstance(oci, dict) else None
    return version if isinstance(version, str) and is_exact_version(version) else None


def _observed_images(observed: Obj) -> list[ResolvedImage]:
    """The `status.resolvedImages` a Bundle shows (kept while it is rejected); unreadable: none."""
    try:
        raw = (observed.get("status") or {}).get("resolvedImages") or []
        return [ResolvedImage.model_validate(image) for image in raw]
    except (ValidationError, TypeError):
        return []


def _observed_gates(observed: Obj) -> tuple[RolloutStatus | None, ScheduleStatus | None]:
    """The `status.rollout` and `status.schedule` a Bundle shows (kept while it is rejected)."""
    shown = observed.get("status") or {}
    try:
        rollout = RolloutStatus.model_validate(shown["rollout"]) if "rollout" in shown else None
        schedule = ScheduleStatus.model_validate(shown["schedule"]) if "schedule" in shown else None
    except (ValidationError, TypeError):
        return None, None
    return rollout, schedule


def _ready_reason(conditions: Sequence[Condition]) -> str | None:
    ready = next((c for c in conditions if c.type == ConditionType.READY.value), None)
    return None if ready is None else ready.reason


def gated_condition(
    conditions: Sequence[Condition], gate: Gate | None, now: str, previous: Sequence[Condition]
) -> list[Condition]:
    """`conditions` with RolloutGated=True saying which gate the rollout waits at and where,
    or without it when none holds it."""
    kind = ConditionType.ROLLOUT_GATED.value
    kept = [c for c in conditions if c.type != kind]
    if gate is None:
        return kept
    old = [c for c in previous if c.type == kind]
    return condition(kind, True, gate.reason.value, gate.message, now, [*kept, *old])


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
    """Why the Cluster itself is not Ready, whatever its bundles say: an invalid name or
    schedule, an import gate holds it back, or its agent has stopped checking in (also when it
    runs no bundle)."""
    if problem := cluster_name_problem(cluster):
        return REASON_INVALID_NAME, problem
    if isinstance(invalid := rollout_gates.cluster_schedule(cluster), InvalidInputError):
        return DisplayState.INVALID_SPEC.value, f"{invalid}; nothing new is deployed to it"
    if gate := is_gated(cluster):
        return gate, gate_message(gate, cluster)
    if offline:
        since = f"since {seen}" if seen else "since the Cluster was registered"
        return DeploymentState.OFFLINE.value, f"the agent has not checked in {since}"
    return None


def _schedule_shown(cluster: Cluster, now: datetime) -> tuple[ScheduleStatus | None, float | None]:
    """What a Cluster's status says of its own schedule, and clock seconds until that changes."""
    own = rollout_gates.cluster_schedule(cluster)
    if own is None:
        return None, None
    if isinstance(own, InvalidInputError):
        return ScheduleStatus(open=False, message=str(own)), None
    edge = next_edge(own, now)
    wait = None if edge is None else (edge - now).total_seconds() + rollout_gates.EDGE_MARGIN
    return schedule_status(own, now), wait


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
        observed = scope.clusters.shared(key.namespace, key.name) if scope else None
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
        shown, edge = _schedule_shown(cluster, self.ctx.clock.now())
        status = status.model_copy(update={"schedule": shown})
        if edge is not None:
            waits = [edge] + ([requeue.requeue_after] if requeue and requeue.requeue_after else [])
            requeue = Result(requeue_after=min(waits))
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
        self.ctx.cluster_changes.record(key.namespace, cluster_ref)
        self.ctx.work.add_all(Stage.GROUP_STATUS, self.ctx.groups_of(scope, key))


class GroupStatusController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.members = GroupMembers()

    def reconcile(self, key: Key) -> None:
        scope = self.ctx.scopes.of(key.namespace)
        observed = scope.groups.shared(key.namespace, key.name) if scope else None
        group = scope.group_models.get(key.namespace, key.name) if scope else None
        if scope is None or observed is None or group is None or is_deleting(observed):
            self.members.forget_group(ref(key.namespace, key.name))
            return
        if placements.awaiting_plans(self.ctx, scope, key.namespace, Stage.GROUP_STATUS, key):
            return
        if placements.awaiting_creations(self.ctx, Stage.GROUP_STATUS, key):
            return
        status = self.members.of_group(self.ctx, scope, group).group_status(
            previous=previous_conditions(observed), now=self.ctx.now_iso()
        )
        patch_status_if_changed(
            self.ctx.store, CLUSTER_GROUP, observed, owned(status, GROUP_FIELDS)
        )
