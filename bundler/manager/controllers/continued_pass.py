"""A Bundle pass continued from what the last full pass left (bundler.manager.memo.continuation).

It costs what changed, not the fleet: the rows of the clusters that changed since are planned
again (memoized like a full pass) and their deployments brought to them, the clusters whose
namespace was not ready are looked at again, and the next `maxNew` batch is created. Whenever
the result could differ from a full pass (a cluster that starts or stops being targeted, a row
that starts or stops failing to render, a deployment found where none was created, a held-back
cluster), it gives up and the full pass decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from bundler.api.bundle import Bundle, RolloutStrategy
from bundler.api.bundledeployment import BundleDeployment
from bundler.core.planning import key as ref
from bundler.core.rollout import (
    DEFAULT_MAX_NEW,
    RolloutDecision,
    RolloutTarget,
    decided_alone,
    plan_rollout,
)
from bundler.errors import BundlerError
from bundler.manager.context import Context, split_ref
from bundler.manager.memo import placements
from bundler.manager.memo.continuation import Leftover
from bundler.manager.memo.outcomes import Outcome
from bundler.manager.memo.rows import BundleRows, Row
from bundler.manager.observed.scope import Scope

# Writes one row's decision: (scope, row, decision, the deployment it has now).
Write = Callable[[Scope, Row, RolloutDecision, BundleDeployment | None], None]
Record = Callable[[Scope, str, Outcome], None]

# Beyond this share of the rows changed, a full pass costs about the same.
_CHANGED_SHARE = 8
_CHANGED_ANYWAY = 16


@dataclass(frozen=True)
class FullPass:
    """What a full pass planned and decided."""

    planned: BundleRows
    writable: Sequence[Row]
    targets: Sequence[RolloutTarget]
    decisions: Sequence[RolloutDecision]


def is_held(decision: RolloutDecision, target: RolloutTarget) -> bool:
    """The rollout keeps this cluster from its desired deployment for now."""
    return decision.stage or decision.rollback or (target.current is None and not decision.create)


def ident(bundle: Bundle) -> tuple[str, int]:
    return bundle.metadata.uid or "", bundle.metadata.generation or 0


def leftover_of(bundle: Bundle, outcome: Outcome, done: FullPass, started: int) -> Leftover | None:
    """What a full pass leaves for the next, if its clusters are each decided alone."""
    strategy = bundle.spec.rolloutStrategy
    if not decided_alone(strategy, len(done.targets)):
        return None
    pairs = list(zip(done.decisions, done.targets, strict=True))
    written = {row.key for row in done.writable}
    return Leftover(
        started,
        ident(bundle),
        outcome,
        strategy,
        rows={row.key: row for row in done.planned.rows},
        to_create=tuple(t.key for d, t in pairs if d.capped),
        unwritable=frozenset(
            r.key for r in done.planned.rows if r.planned is not None and r.key not in written
        ),
        held=frozenset(t.key for d, t in pairs if is_held(d, t) and not d.capped),
        targets=len(done.targets),
    )


@dataclass(frozen=True)
class _Next:
    """The continued pass's plan: rows, writes, and what it leaves."""

    rows: dict[str, Row]
    updates: list[tuple[Row, RolloutDecision, BundleDeployment]]
    batch: tuple[str, ...]
    leftover: Leftover


class ContinuedPass:
    def __init__(self, ctx: Context, write: Write, record: Record) -> None:
        self.ctx = ctx
        self.write = write
        self.record = record

    def run(self, scope: Scope, bundle: Bundle, left: Leftover, started: int) -> bool:
        """Continue `left`; False (nothing done) when a full pass must decide instead."""
        if left.ident != ident(bundle):
            return False
        following = self._plan(scope, bundle, left, started)
        if following is None:
            return False
        bundle_ref = ref(bundle.metadata.namespace, bundle.metadata.name)
        self.ctx.continuations.looked_at(len(left.changed) + len(following.batch))
        outcome = _outcome(left.outcome, following.rows, left.changed, following.leftover)
        if following.batch:
            self.ctx.continuations.creating_now(bundle_ref)
        # Kept before recording and writing, as a full pass does (a failing pass drops it).
        self.ctx.continuations.keep(bundle_ref, replace(following.leftover, outcome=outcome))
        if outcome != left.outcome:
            self.record(scope, bundle_ref, outcome)
        failures: list[BundlerError] = []
        for row, decision, current in following.updates:
            attempt(failures, partial(self.write, scope, row, decision, current))
        for key in following.batch:
            created = RolloutDecision(key, promote=True, create=True, reason="created")
            attempt(failures, partial(self.write, scope, following.rows[key], created, None))
        if failures:
            raise failures[0]
        return True

    def _plan(self, scope: Scope, bundle: Bundle, left: Leftover, started: int) -> _Next | None:
        rows = self._replanned(scope, bundle, left)
        if rows is None:
            return None
        # A namespace that became ready shows as its cluster changed (routing.on_namespace).
        ready = tuple(
            k for k in sorted(left.changed & left.unwritable) if _namespace_ready(scope, rows[k])
        )
        candidates = (*left.to_create, *ready)
        targets = left.targets + len(ready)
        max_new = _max_new(left.strategy)
        batch, rest = candidates[:max_new], candidates[max_new:]
        bundle_ref = ref(bundle.metadata.namespace, bundle.metadata.name)
        waiting = (set(left.to_create) | left.unwritable) if left.changed else set()
        if (
            not decided_alone(left.strategy, targets)
            or any(_scheduled(rows[k]) for k in left.changed if k in rows)
            or any(_placed(scope, bundle_ref, rows[k]) for k in batch)
            or any(not _namespace_ready(scope, rows[k]) for k in batch)
            or any(_held_back(bundle, rows[k]) for k in (*ready, *(waiting & left.changed)))
        ):
            return None
        updates = []
        held = set(left.held)
        for key in sorted(left.changed - waiting):
            row = rows.get(key)
            if row is None or row.planned is None:
                continue  # not targeted, or still failing to render: nothing to write
            current = _placed(scope, bundle_ref, row)
            if current is None:
                return None  # held back before it was created: the full pass decides
            decision = self._decide(scope, bundle, left.strategy, row, current)
            held.discard(key)
            if is_held(decision, RolloutTarget(row.cluster, "", current)):
                held.add(key)
            updates.append((row, decision, current))
        unwritable = left.unwritable - set(ready)
        leftover = replace(
            left,
            started=started,
            rows=rows,
            to_create=rest,
            unwritable=unwritable,
            held=frozenset(held),
            targets=targets,
            changed=frozenset(),
        )
        return _Next(rows, updates, batch, leftover)

    def _replanned(self, scope: Scope, bundle: Bundle, left: Leftover) -> dict[str, Row] | None:
        """Every row, those of the changed clusters planned again; None when one starts or stops
        being targeted or rendered (the full pass decides that)."""
        if len(left.changed) > max(_CHANGED_ANYWAY, len(left.rows) // _CHANGED_SHARE):
            return None
        rows = dict(left.rows)
        workspace = bundle.metadata.namespace or ""
        for cluster_ref in left.changed:
            key = split_ref(cluster_ref)
            cluster = scope.cluster_models.get(key.namespace, key.name)
            if cluster is None or cluster.metadata.deletionTimestamp:
                return None
            groups, memberships = scope.groups_in(workspace), scope.memberships(cluster)
            known, row = self.ctx.memo.one(bundle, cluster, groups, memberships)
            before = rows.get(cluster_ref)
            if not known or (row is None) != (before is None):
                return None
            if row is not None and before is not None:
                if (row.planned is None) != (before.planned is None):
                    return None
                rows[cluster_ref] = row
        return rows

    def _decide(
        self,
        scope: Scope,
        bundle: Bundle,
        strategy: RolloutStrategy | None,
        row: Row,
        current: BundleDeployment,
    ) -> RolloutDecision:
        """One cluster's decision: decided alone, it is what a full pass would decide."""
        assert row.planned is not None
        offline = placements.is_offline(self.ctx, scope, row.cluster)
        target = RolloutTarget(row.cluster, row.planned.deployment_id, current, offline)
        workspace = bundle.metadata.namespace or ""
        groups = scope.groups_in(workspace)
        return plan_rollout(strategy, [target], groups, bundle_paused=bundle.spec.paused).decisions[
            0
        ]


def _outcome(
    before: Outcome, rows: Mapping[str, Row], changed: frozenset[str], left: Leftover
) -> Outcome:
    errors = dict(before.errors)
    for key in changed:
        row = rows.get(key)
        if row is not None and row.error is not None:
            errors[key] = row.error
        else:
            errors.pop(key, None)
    held = bool(left.to_create or left.unwritable or left.held)
    if held == before.held and errors == before.errors:
        return before
    return replace(before, errors=errors, held=held)


def attempt(failures: list[BundlerError], write: Callable[[], object]) -> None:
    """Run one write; a failure is kept for the end so the other clusters still proceed."""
    try:
        write()
    except BundlerError as error:
        failures.append(error)


def _max_new(strategy: RolloutStrategy | None) -> int:
    return (strategy.maxNew if strategy is not None else None) or DEFAULT_MAX_NEW


def _namespace_ready(scope: Scope, row: Row) -> bool:
    return row.planned is not None and scope.namespace_ready(row.planned.namespace)


def _held_back(bundle: Bundle, row: Row) -> bool:
    """Would a full pass hold this cluster's creation back (a pause, a maintenance window), or
    not write it at all?"""
    return bundle.spec.paused or row.cluster.spec.paused or _scheduled(row) or row.planned is None


def _scheduled(row: Row) -> bool:
    """A cluster with maintenance windows: only a full pass knows whether one is open."""
    return row.cluster.spec.schedule is not None


def _placed(scope: Scope, bundle_ref: str, row: Row) -> BundleDeployment | None:
    """The row's cluster's deployment of its bundle, if there is one."""
    assert row.planned is not None
    return scope.deployment_models.in_namespace(row.planned.namespace).get(bundle_ref)
