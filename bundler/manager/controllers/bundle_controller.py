"""The bundle controller: a Bundle in, its BundleDeployments out.

One pass: make sure the cleanup finalizer is on the Bundle; decide which clusters it targets,
resolve its version ranges and images, render each targeted cluster's row (memoized), let the
rollout strategy decide which clusters get their new deployment now, write only the
BundleDeployments whose spec or bundler labels differ, and delete those of clusters no longer
targeted. The manager owns a BundleDeployment's spec and labels; its status is the agent's and is
never touched here.

A Bundle that is invalid, whose range cannot be resolved, whose `helm.secretRef` Secret is
missing, or whose management values (`valuesFrom` with `source: Management`) are missing or not
meant for delivery (bundler.resolution.management_values), is rejected for the pass: its
BundleDeployments stay exactly as they are and the status controller reports Ready=False (the
object's creation or relabelling wakes the Bundle again). A template error is
confined to its cluster, which keeps what it runs, and so is an image that cannot be resolved, for
the clusters whose values read it (bundler.resolution.image_resolution; the Bundle says
ImagesResolved=False, and an unreachable registry is retried with backoff). Before a
BundleDeployment that names a credentials Secret or management values is written, they are copied
into its cluster namespace (bundler.manager.copies.secret_copies); a cluster where a Secret that
bundler did not copy is in the way keeps what it runs too, and the Bundle says Ready=False,
CredentialsCopyBlocked (or ValuesCopyBlocked), naming it.
A change that would delete many of the Bundle's deployments at once is held by the deletion guard
(bundler.core.deletion_guard): they stay, and the Bundle says Ready=False, DeletionHeld.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT
from bundler.core.content import bundle_content, content_kind, poll_interval
from bundler.core.deletion_guard import deletion_hold
from bundler.core.durations import duration_seconds
from bundler.core.json_equality import json_equal
from bundler.core.planning import key as ref
from bundler.core.planning.bundle_pass import resolve_inputs
from bundler.core.planning.version_query import query_for
from bundler.core.rollout import RolloutDecision, RolloutTarget, plan_rollout
from bundler.core.targeting import missing_references
from bundler.core.validation import bundle_of
from bundler.errors import BundlerError, InvalidInputError
from bundler.manager.context import Context, split_ref
from bundler.manager.controllers import rollout_gates, rollout_memory
from bundler.manager.controllers.bundle_inputs import (
    Rejected,
    ScopeResolvers,
    bundle_labels,
    kubeconfig_secrets,
)
from bundler.manager.controllers.continued_pass import (
    ContinuedPass,
    FullPass,
    attempt,
    is_held,
    leftover_of,
)
from bundler.manager.controllers.image_status import images_outcome
from bundler.manager.copies.credentials import (
    CredentialsRefusedError,
    read_sources,
    secret_names,
)
from bundler.manager.copies.secret_copies import SecretCopies, Sources
from bundler.manager.memo import placements
from bundler.manager.memo.outcomes import Outcome, Rejection
from bundler.manager.memo.parsed_bundles import ParsedBundles
from bundler.manager.memo.rows import BundleRows, Row
from bundler.manager.observed.scope import Scope
from bundler.manager.work import Stage
from bundler.manager.writes import (
    adding_finalizer,
    create_or_update,
    delete_if_present,
    has_finalizer,
    is_deleting,
    removing_finalizer,
    update_with_retry,
)
from bundler.resolution.image_resolution import first_unavailable
from bundler.resolution.management_values import Delivery
from bundler.runtime.controller import Result
from bundler.runtime.key import Key
from bundler.store.protocol import Obj

log = logging.getLogger(__name__)

BUNDLE_FINALIZER = "bundler.dev/bundle-cleanup"
REASON_INVALID = "InvalidSpec"
REASON_CREDENTIALS = "CredentialsNotFound"
REASON_COPY_BLOCKED = "CredentialsCopyBlocked"
REASON_CREDENTIALS_REFUSED = "CredentialsRefused"
REASON_VALUES_COPY_BLOCKED = "ValuesCopyBlocked"
REASON_DELETION_HELD = "DeletionHeld"

SpecFor = Callable[[Obj | None], Obj]


class BundleController:
    def __init__(self, ctx: Context, copies: SecretCopies, values: SecretCopies) -> None:
        self.ctx = ctx
        self.copies = copies
        self.values = values
        self._continued = ContinuedPass(ctx, self._write_row, self._record)
        self._parsed = ParsedBundles()

    def reconcile(self, key: Key) -> Result | None:
        try:
            return self._reconcile(key)
        except BaseException:
            # What a failing pass left assumes writes that did not happen: plan in full again.
            self.ctx.continuations.invalidate(ref(key.namespace, key.name))
            raise
        finally:
            self.ctx.continuations.pass_ended(ref(key.namespace, key.name))
            placements.release_creations(self.ctx, ref(key.namespace, key.name))

    def _reconcile(self, key: Key) -> Result | None:
        scope = self.ctx.scopes.of(key.namespace)
        if scope is None:
            return None
        bundle_ref = ref(key.namespace, key.name)
        observed = scope.bundles.shared(key.namespace, key.name)
        if observed is None:
            self._forget(scope, bundle_ref)
            return None
        if is_deleting(observed):
            return self._finalize(scope, bundle_ref, observed)
        if self.ctx.setups.awaiting(self.ctx.work, Stage.BUNDLE, key):
            return None  # a cluster namespace is on its way: one pass then writes there too
        generation = int(observed["metadata"].get("generation") or 0)
        try:
            bundle = self._parsed.of(bundle_ref, observed)
        except InvalidInputError as invalid:
            self._reject(scope, bundle_ref, generation, Rejection(REASON_INVALID, str(invalid)))
            return None
        started = self.ctx.continuations.begin()
        leftover = self.ctx.continuations.take(bundle_ref)
        if leftover is not None and self._continued.run(scope, bundle, leftover, started):
            update_with_retry(self.ctx.store, BUNDLE, observed, adding_finalizer(BUNDLE_FINALIZER))
            return None
        found = self._plan(scope, bundle_ref, bundle)
        if found is None:
            # pollInterval asks again also while rejected: a chart pushed later still rolls out.
            return _poll_again(bundle)
        planned, delivery = found
        named = (
            n for row in planned.rows if row.planned for n in secret_names(row.planned.options)
        )
        sources = self._sources(scope, bundle_ref, bundle, named)
        if sources is None:
            return None
        recheck = self._apply(scope, observed, bundle, planned, _Copied(sources, delivery), started)
        if (unavailable := first_unavailable(planned.image_queries, planned.images)) is not None:
            raise unavailable
        poll = self.ctx.resolution.seconds_until_poll(bundle)
        image_poll = self.ctx.images.seconds_until_poll(bundle)
        waits = [w for w in (poll, image_poll, recheck) if w is not None]
        return Result(requeue_after=min(waits)) if waits else None

    # -- planning -----------------------------------------------------------------------------

    def _plan(
        self, scope: Scope, bundle_ref: str, bundle: Bundle
    ) -> tuple[BundleRows, Delivery] | None:
        """The bundle's rows and the management values they deliver, or None after rejecting it
        (a TransientError is re-raised)."""
        workspace = bundle.metadata.namespace or ""
        generation = bundle.metadata.generation or 0
        decided = self.ctx.memo.decide(
            bundle, scope.live_clusters(workspace), scope.groups_in(workspace), scope.memberships
        )
        # Ranges are resolved with the credentials: a missing Secret says so before a registry
        # refuses the request.
        needed = (q.secret for q in decided.queries if q.secret is not None)
        if self._sources(scope, bundle_ref, bundle, needed) is None:
            return None
        resolvers = ScopeResolvers(self.ctx, scope, workspace)
        try:
            inputs = resolve_inputs(bundle, decided.decisions, resolvers)
        except Rejected as rejected:
            if rejected.refused and (
                withdrawn := self.values.withdraw(workspace, rejected.refused)
            ):
                log.info("%s: deleted %d copies of %s", bundle_ref, withdrawn, rejected.refused)
            self._reject(scope, bundle_ref, generation, rejected.why)
            if rejected.transient is not None:
                raise rejected.transient from rejected
            return None
        try:
            rows = self.ctx.memo.render(bundle, decided, inputs)
        except InvalidInputError as invalid:
            self._reject(scope, bundle_ref, generation, Rejection(REASON_INVALID, str(invalid)))
            return None
        return rows, resolvers.delivery

    def _sources(
        self, scope: Scope, bundle_ref: str, bundle: Bundle, names: Iterable[str]
    ) -> Sources | None:
        """The credentials Secrets named, or None after rejecting the bundle for a missing one, or
        one that is not registry credentials."""
        names = set(names)
        if not names:
            return {}
        workspace = bundle.metadata.namespace or ""
        try:
            return read_sources(scope.secrets, bundle, names, kubeconfig_secrets(scope, workspace))
        except CredentialsRefusedError as refused:
            why = Rejection(REASON_CREDENTIALS_REFUSED, str(refused))
            if withdrawn := self.copies.withdraw(workspace, refused.secret):
                log.info(
                    "%s: deleted %d copies of Secret %s", bundle_ref, withdrawn, refused.secret
                )
        except InvalidInputError as missing:
            why = Rejection(REASON_CREDENTIALS, str(missing))
        self._reject(scope, bundle_ref, bundle.metadata.generation or 0, why)
        return None

    def _reject(self, scope: Scope, bundle_ref: str, generation: int, why: Rejection) -> None:
        log.info("%s rejected: %s", bundle_ref, why.message)
        self._record(scope, bundle_ref, Outcome(generation, None, rejection=why))

    def _record(self, scope: Scope, bundle_ref: str, outcome: Outcome) -> None:
        recorded = self.ctx.outcomes.record(bundle_ref, outcome)
        self.ctx.wake_clusters(scope, recorded.clusters)
        if recorded.differs:
            self.ctx.work.add(Stage.BUNDLE_STATUS, split_ref(bundle_ref))
        self.ctx.work.release(bundle_ref)

    # -- writing ------------------------------------------------------------------------------

    def _apply(
        self,
        scope: Scope,
        observed: Obj,
        bundle: Bundle,
        planned: BundleRows,
        copied: _Copied,
        started: int,
    ) -> float | None:
        """Write the rollout's decisions; returns clock seconds until a progress deadline, a
        bake's end or a window's edge."""
        bundle_ref = ref(bundle.metadata.namespace, bundle.metadata.name)
        existing = scope.deployment_models.of_bundle(bundle_ref)
        writable = [
            row
            for row in planned.rows
            if row.planned is not None
            and (row.key in existing or scope.namespace_ready(row.planned.namespace))
        ]
        targets = [
            RolloutTarget(
                row.cluster,
                row.planned.deployment_id,
                existing.get(row.key),
                placements.is_offline(self.ctx, scope, row.cluster),
            )
            for row in writable
            if row.planned is not None
        ]
        now = self.ctx.clock.now()
        groups = scope.groups_in(bundle.metadata.namespace or "")
        recorded = self.ctx.outcomes.get(bundle_ref)
        previous = rollout_gates.previous_records(
            recorded.rollout if recorded is not None else None, observed
        )
        gates = rollout_gates.gates_of(bundle, targets, now, previous)
        bake_failed = rollout_gates.bake_failed(bundle, targets, groups, gates)
        failing = rollout_memory.gate(bundle, targets, now, bake_failed)
        rollout = plan_rollout(
            bundle.spec.rolloutStrategy,
            targets,
            groups,
            bundle_paused=bundle.spec.paused,
            halted=failing.halted,
            rollback=failing.halt.rollback if failing.halt is not None else (),
            gates=gates,
        )
        decisions = rollout.decisions
        # With onFailure or gates every deployment status change may fail the rollout or end
        # a wait: always listen.
        held = (
            failing.watching
            or gates is not None
            or len(writable) < sum(1 for r in planned.rows if r.planned is not None)
            or any(is_held(d, t) for d, t in zip(decisions, targets, strict=True))
        )
        missing = _missing(scope, bundle)
        gated = rollout_gates.gated_outcome(bundle, gates, rollout.partitions)
        holds = _Holds(failing.rejection(), *_guarded(scope, bundle, planned, existing), gated)
        outcome = _outcome(bundle, planned, held, self._blocked(writable), missing, holds)
        if any(d.create for d in decisions):
            self.ctx.continuations.creating_now(bundle_ref)
        if not (
            failing.watching
            or gates is not None
            or copied
            or planned.resolved
            or planned.image_queries
        ):
            # Kept before the outcome is recorded: the roll-ups it wakes then wait for the
            # creations left (a failing pass drops it again).
            done = FullPass(planned, writable, targets, decisions)
            leftover = leftover_of(bundle, outcome, done, started)
            if leftover is not None:
                self.ctx.continuations.keep(bundle_ref, leftover)
        # Recorded before any write (so status roll-ups never wait on a failing write), and before
        # creating deployments (so the cluster controller never takes one for a stray).
        self._record(scope, bundle_ref, outcome)
        update_with_retry(self.ctx.store, BUNDLE, observed, adding_finalizer(BUNDLE_FINALIZER))
        failures: list[BundlerError] = []
        memory = _Memory(failing.watching, self.ctx.now_iso())
        for row, decision, target in zip(writable, decisions, targets, strict=True):
            write = partial(self._write, scope, row, decision, target.current, copied, memory)
            attempt(failures, write)
        for cluster, stale in existing.items():
            if not outcome.keeps(cluster):
                attempt(failures, partial(_delete, self.ctx, stale))
        # A copy found blocked (or no longer) shows at once, not only from the next pass.
        after = _outcome(bundle, planned, held, self._blocked(writable), missing, holds)
        if after != outcome:
            self._record(scope, bundle_ref, after)
        if failures:
            raise failures[0]
        self.ctx.continuations.looked_at(len(planned.rows))
        waits = (
            failing.recheck_after,
            rollout_gates.seconds_to_look_again(bundle, gates, rollout.partitions),
        )
        due = [w for w in waits if w is not None]
        return min(due) if due else None

    def _blocked(self, rows: Iterable[Row]) -> dict[str, Rejection]:
        """Why each cluster whose credentials or values copy is blocked cannot get its
        deployment."""
        found = {}
        kinds = ((self.copies, REASON_COPY_BLOCKED), (self.values, REASON_VALUES_COPY_BLOCKED))
        for row in rows:
            assert row.planned is not None
            for copies, reason in kinds:
                if (why := copies.blocked(row.planned)) is not None:
                    found[row.key] = Rejection(reason, why)
                    break
        return found

    def _write_row(
        self, scope: Scope, row: Row, decision: RolloutDecision, current: BundleDeployment | None
    ) -> None:
        """One row's decision, in a continued pass: it names no copies, records no memory."""
        self._write(scope, row, decision, current, _Copied(), _Memory(False, ""))

    def _write(
        self,
        scope: Scope,
        row: Row,
        decision: RolloutDecision,
        current: BundleDeployment | None,
        copied: _Copied,
        memory: _Memory,
    ) -> None:
        planned = row.planned
        assert planned is not None
        if current is not None or decision.create:
            # Every such write names the planned options (promoted, staged or already there).
            self.copies.prepare(planned, current, copied.credentials)
            self.values.prepare(planned, current, copied.delivery.sources)
        if current is not None and _in_sync(current, row, decision):
            return
        observed = scope.deployments.shared(planned.namespace, planned.name)
        spec_for = _spec_for(row, decision, memory.replacing(current))
        if observed is None and not decision.create:
            return
        desired = planned.to_object()
        desired["spec"] = spec_for(None if observed is None else observed.get("spec"))
        key = Key(planned.namespace, planned.name)
        self.ctx.own_writes.expect(key, desired["spec"], planned.labels, planned.bundle)
        written = None
        try:
            written = create_or_update(
                self.ctx.store, BUNDLE_DEPLOYMENT, desired, observed, _syncing(desired, spec_for)
            )
        finally:
            if written is None:
                self.ctx.own_writes.forget(key)  # nothing written: no echo to wait for
        if written is not None:
            self.copies.settle(planned, written, current)
            self.values.settle(planned, written, current)
            self.ctx.metrics.rolled_out(split_ref(planned.bundle), decision)

    # -- deletion -----------------------------------------------------------------------------

    def _finalize(self, scope: Scope, bundle_ref: str, observed: Obj) -> Result | None:
        """Delete the bundle's deployments, then let it go. Until it is gone it targets nothing.
        A deployment on a cluster outside its maintenance window stays until the window
        opens (the Bundle's and the Cluster's schedules), and the Bundle with it."""
        generation = int(observed["metadata"].get("generation") or 0)
        self._record(scope, bundle_ref, Outcome(generation, frozenset()))
        if not has_finalizer(observed, BUNDLE_FINALIZER):
            return None
        deployments = scope.deployment_models.of_bundle(bundle_ref)
        held = rollout_gates.deletion_holds(
            _parsed_or_none(observed),
            {c: _cluster_of(scope, c) for c in deployments},
            self.ctx.clock.now(),
        )
        for cluster, deployment in deployments.items():
            if cluster not in held:
                _delete(self.ctx, deployment)
        if held:
            log.info("%s: deletion waits for the maintenance windows of %s", bundle_ref, held)
            return Result(
                requeue_after=rollout_gates.seconds_until_open(held, self.ctx.clock.now())
            )
        update_with_retry(self.ctx.store, BUNDLE, observed, removing_finalizer(BUNDLE_FINALIZER))
        return None

    def _forget(self, scope: Scope, bundle_ref: str) -> None:
        self._parsed.forget(bundle_ref)
        self.ctx.continuations.forget(bundle_ref)
        self.ctx.tallies.forget(bundle_ref)
        self.ctx.memo.forget(bundle_ref)
        self.ctx.resolution.forget(bundle_ref)
        self.ctx.images.forget(bundle_ref)
        self.ctx.wake_clusters(scope, self.ctx.outcomes.forget(bundle_ref))
        self.ctx.work.release(bundle_ref)


def _parsed_or_none(observed: Obj) -> Bundle | None:
    """The Bundle, or None when it does not parse (its schedule is then unknown)."""
    try:
        return bundle_of(observed)
    except InvalidInputError:
        return None


def _cluster_of(scope: Scope, cluster_ref: str) -> Cluster | None:
    """The live Cluster of a reference; None when it is gone or going (its deletion is
    explicit: nothing waits for its windows)."""
    key = split_ref(cluster_ref)
    cluster = scope.cluster_models.get(key.namespace, key.name)
    return None if cluster is None or cluster.metadata.deletionTimestamp else cluster


def _poll_again(bundle: Bundle) -> Result | None:
    interval = poll_interval(bundle.spec)
    return None if interval is None else Result(requeue_after=duration_seconds(interval))


def _in_sync(current: BundleDeployment, row: Row, decision: RolloutDecision) -> bool:
    """Whether the observed deployment already is what this decision asks for (the cheap check
    that spares reading the raw object for every cluster on every pass)."""
    planned = row.planned
    assert planned is not None
    spec = current.spec
    labels = current.metadata.labels
    if spec.paused != row.cluster.spec.paused or any(
        labels.get(k) != v for k, v in planned.labels.items()
    ):
        return False
    if decision.rollback:
        return (
            spec.rolledBackFrom == planned.deployment_id
            and spec.deploymentID != planned.deployment_id
        )
    if decision.promote or decision.create:
        return (
            spec.deploymentID == planned.deployment_id
            and spec.options == planned.options
            and spec.stagedOptions is None
            and spec.stagedDeploymentID is None
        )
    if decision.stage:
        return (
            spec.stagedDeploymentID == planned.deployment_id
            and spec.stagedOptions == planned.options
        )
    # Left as it is, but options edited by hand under the current ID are still restored.
    return spec.deploymentID != planned.deployment_id or spec.options == planned.options


@dataclass(frozen=True)
class _Memory:
    """Whether this pass records rollout memory (bundler.manager.controllers.rollout_memory), and
    when."""

    recording: bool
    now_iso: str

    def replacing(self, current: BundleDeployment | None) -> _Promotion | None:
        if not self.recording:
            return None
        return _Promotion(self.now_iso, rollout_memory.last_ready(current))


@dataclass(frozen=True)
class _Promotion:
    now_iso: str
    last_ready: Obj | None


def _spec_for(row: Row, decision: RolloutDecision, promotion: _Promotion | None) -> SpecFor:
    """The spec the BundleDeployment should have, given the spec it has (None: none yet)."""
    planned = row.planned
    assert planned is not None
    wanted = {"options": planned.options.to_wire(), "deploymentID": planned.deployment_id}
    paused = row.cluster.spec.paused

    def spec_for(current: Obj | None) -> Obj:
        spec: Obj
        if decision.rollback and promotion and current and current.get("lastReady"):
            spec = rollout_memory.rolled_back(current, wanted, promotion.now_iso)
        elif current is None or decision.promote or decision.create:
            spec = dict(wanted)
            if promotion is not None:
                spec = rollout_memory.promoted(
                    spec, current, promotion.last_ready, promotion.now_iso
                )
        elif decision.stage:
            spec = {
                **current,
                "stagedOptions": wanted["options"],
                "stagedDeploymentID": wanted["deploymentID"],
            }
        else:
            spec = dict(current)
            if current.get("deploymentID") == wanted["deploymentID"]:
                spec["options"] = wanted["options"]
        spec.pop("paused", None)
        if paused:
            spec["paused"] = True
        return spec

    return spec_for


def _syncing(desired: Obj, spec_for: SpecFor) -> Callable[[Obj], bool]:
    """Bring an observed BundleDeployment's bundler labels and spec to what is desired."""
    labels = desired["metadata"]["labels"]

    def mutate(obj: Obj) -> bool:
        changed = False
        current_labels = obj["metadata"].setdefault("labels", {})
        for name, value in labels.items():
            if current_labels.get(name) != value:
                current_labels[name] = value
                changed = True
        spec = spec_for(obj.get("spec"))
        if not json_equal(spec, obj.get("spec")):
            obj["spec"] = spec
            changed = True
        return changed

    return mutate


def _delete(ctx: Context, deployment: BundleDeployment) -> None:
    meta = deployment.metadata
    if not meta.deletionTimestamp:
        delete_if_present(ctx.store, BUNDLE_DEPLOYMENT, meta.name, meta.namespace)


def _missing(scope: Scope, bundle: Bundle) -> tuple[str, ...]:
    """The clusterGroups and dependsOn of `bundle` naming (or selecting) nothing in its
    workspace."""
    workspace = bundle.metadata.namespace or ""
    labels = bundle_labels(scope, workspace)
    return tuple(missing_references(bundle, scope.groups_in(workspace), labels, labels))


@dataclass(frozen=True)
class _Holds:
    """What this pass holds: a halted rollout (why), the deployments of untargeted clusters
    the deletion guard keeps (and why), and what the rollout gates hold."""

    halted: Rejection | None = None
    kept: frozenset[str] = frozenset()
    deletion_held: Rejection | None = None
    gated: rollout_gates.GatedOutcome = field(default_factory=rollout_gates.GatedOutcome)


def _guarded(
    scope: Scope, bundle: Bundle, planned: BundleRows, existing: Mapping[str, BundleDeployment]
) -> tuple[frozenset[str], Rejection | None]:
    """The deployments of untargeted clusters the deletion guard keeps, and why. Deleting a
    Cluster is explicit, like deleting the Bundle: the deployments of a Cluster gone are not
    counted, and not kept."""
    workspace = bundle.metadata.namespace or ""
    live = {ref(workspace, c.metadata.name) for c in scope.live_clusters(workspace)}
    stale = frozenset((existing.keys() - {row.key for row in planned.rows}) & live)
    strategy = bundle.spec.rolloutStrategy
    hold = deletion_hold(
        strategy.deletionGuard if strategy is not None else None,
        len(stale),
        len(existing),
        generation=bundle.metadata.generation or 0,
        annotations=bundle.metadata.annotations,
    )
    if hold is None:
        return frozenset(), None
    return stale, Rejection(REASON_DELETION_HELD, hold.message())


def _outcome(
    bundle: Bundle,
    planned: BundleRows,
    held: bool,
    blocked: Mapping[str, Rejection],
    missing: tuple[str, ...] = (),
    holds: _Holds = _Holds(),
) -> Outcome:
    errors = {row.key: row.error for row in planned.rows if row.error is not None}
    return Outcome(
        generation=bundle.metadata.generation or 0,
        targeted=frozenset(row.key for row in planned.rows),
        errors={**errors, **{key: why.message for key, why in blocked.items()}},
        blocked=_blocked_reason(blocked),
        resolved_version=_resolved_version(bundle, planned),
        held=held,
        missing=missing,
        kept=holds.kept,
        deletion_held=holds.deletion_held,
        halted=holds.halted,
        images=images_outcome(planned, bool(bundle.spec.images)),
        paused=bundle.spec.paused,
        rollout=holds.gated.rollout,
        gate=holds.gated.gate,
        holds=holds.gated.holds,
        schedule=holds.gated.schedule,
    )


def _blocked_reason(blocked: Mapping[str, Rejection]) -> Rejection | None:
    """The Bundle's Ready condition while copies are blocked: the first one, counted."""
    if not blocked:
        return None
    first = min(blocked)
    others = len(blocked) - 1
    more = f" (and {others} more cluster{'s' if others > 1 else ''})" if others else ""
    why = blocked[first]
    return Rejection(why.reason, f"cluster {first}{more}: {why.message}")


@dataclass(frozen=True)
class _Copied:
    """What one pass copies into cluster namespaces: credentials Secrets by name, and the
    management values it delivers."""

    credentials: Sources = field(default_factory=dict)
    delivery: Delivery = field(default_factory=Delivery)

    def __bool__(self) -> bool:
        return bool(self.credentials or self.delivery.sources)


def _resolved_version(bundle: Bundle, planned: BundleRows) -> str | None:
    """The concrete version the Bundle's own `spec.helm.version` range resolved to, if a range."""
    query = query_for(bundle_content(bundle.spec), content_kind(bundle.spec))
    return None if query is None else planned.resolved.get(query.key)
