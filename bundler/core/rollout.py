"""Rollout: which targeted clusters get their new deployment now and which keep it staged.

Fleet's model (design §3), decided in one pure pass over the targets in their given order:

- Partitions. With manual `partitions[]`, each cluster joins the first partition whose criteria
  pick it (clusterName, clusterSelector, clusterGroup, clusterGroupSelector, AND-ed, exactly as for
  Bundle targets: a partition with no criterion picks nothing); partitions that pick no cluster are
  left out. Clusters no partition picks are partitioned automatically after them (one trailing
  partition below the threshold); Fleet leaves them in no partition, so they never deploy.
  Automatic partitioning cuts chunks of `autoPartitionSize` (default 25%) once there are at least
  `autoPartitionThreshold` (default 200) clusters; below that all clusters form one partition.
- Unavailable. A cluster is unavailable while its BundleDeployment has not applied its current
  deploymentID or is not ready. Counting starts from what the BundleDeployments report and grows
  with every promotion and creation of this pass.
- Budgets. `maxUnavailable` (default 100%) is resolved against all targets for the bundle and
  against each partition's size for that partition (a partition's own `maxUnavailable` overrides
  the bundle's). A cluster whose deploymentID changes is promoted only if both budgets still have
  room for one more unavailable cluster; otherwise the new deployment is only staged. A cluster that
  is already unavailable is promoted regardless: it cannot make things worse, and holding back a fix
  from a broken cluster would stall the rollout for good.
- Partition gate. After its clusters are decided, a partition is unavailable when its unavailable
  count exceeds its maxUnavailable. Once more than `maxUnavailablePartitions` (default 0) partitions
  are unavailable, every later partition waits: it stages, and creates nothing.
- New clusters. A cluster without a BundleDeployment gets one created with its options promoted
  (nothing runs there yet, so there is nothing to stage against), at most `maxNew` (default 50) per
  pass. Creations are not held back by maxUnavailable (that budget is about updates, as in Fleet),
  but each one counts as unavailable and so holds back updates elsewhere.
- Pause. A paused bundle or cluster stages but never promotes, and creates nothing.
- Halt (bundler.core.rollout_failures decides it). A halted rollout stages but never promotes,
  and creates nothing; the clusters it names for rollback get their `spec.lastReady` options back
  (the desired ones staged), whatever the budgets say: they only return to what ran there.
- Gates (bundler.core.rollout_gates, with `gates`). A partition may wait as a whole for the bake
  of the one before it or for an approval (it stages, and creates nothing), and a cluster outside
  its maintenance window waits on its own; `plan_rollout` also says where each partition
  stands.
- Offline clusters (bundler's rule, not Fleet's). With `offlineClusters: Ignore` (the default) a
  cluster whose agent is Offline is not counted unavailable, takes no room in any budget (so it
  never holds its partition back), and is promoted (or created) whenever it is not paused or in
  a waiting partition: it converges when it returns. It still counts in the totals percentages
  are taken of. `offlineClusters: Block` counts it like any other cluster, as Fleet does, so one
  disconnected site can freeze a rollout.

Percentages round down with a minimum of 1; plain numbers are taken as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bundler.api.bundle import (
    BundleTarget,
    OfflineClusters,
    Partition,
    PartitionState,
    RolloutStrategy,
)
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.meta import IntOrPercent
from bundler.core.rollout_gates import Gates, Hold, Member, PartitionProgress
from bundler.core.targeting import evaluate_target, groups_of

DEFAULT_MAX_UNAVAILABLE = "100%"
DEFAULT_MAX_UNAVAILABLE_PARTITIONS = 0
DEFAULT_AUTO_PARTITION_SIZE = "25%"
DEFAULT_AUTO_PARTITION_THRESHOLD = 200
DEFAULT_MAX_NEW = 50


@dataclass(frozen=True)
class RolloutTarget:
    """One targeted cluster: its current BundleDeployment (None: none yet), the desired ID, and
    whether its agent is Offline (the caller decides, by its own clock)."""

    cluster: Cluster
    desired_id: str
    current: BundleDeployment | None
    offline: bool = False

    @property
    def key(self) -> str:
        return f"{self.cluster.metadata.namespace}/{self.cluster.metadata.name}"


@dataclass(frozen=True)
class RolloutDecision:
    """What to write for one cluster this pass.

    create: create the BundleDeployment with the desired options (promote is then True as well).
    promote: spec.options/deploymentID become the desired ones and the staged fields are cleared.
    stage: spec.stagedOptions/stagedDeploymentID become the desired ones; options stay.
    rollback: spec.options/deploymentID return to spec.lastReady, the desired ones are staged.
    None of them: leave the cluster as it is.
    capped: not created only because this pass already created `maxNew` deployments.
    """

    cluster: str
    promote: bool = False
    stage: bool = False
    create: bool = False
    rollback: bool = False
    reason: str = ""
    capped: bool = False


@dataclass(frozen=True)
class RolloutPartition:
    name: str
    targets: tuple[RolloutTarget, ...]
    max_unavailable: int


@dataclass
class _Budget:
    """Unavailable clusters allowed in a scope (the bundle or one partition) during one pass."""

    scope: str
    limit: int
    used: int

    def has_room(self) -> bool:
        return self.used < self.limit

    def describe(self) -> str:
        return f"{self.scope} has {self.used} unavailable, maxUnavailable is {self.limit}"


@dataclass
class _Creations:
    left: int
    limit: int


@dataclass(frozen=True)
class _Counting:
    """Which targets' unavailability counts against the budgets."""

    ignore_offline: bool

    def counts(self, target: RolloutTarget) -> bool:
        return not (self.ignore_offline and target.offline)

    def unavailable(self, targets: Sequence[RolloutTarget]) -> int:
        return sum(
            1
            for t in targets
            if t.current is not None and self.counts(t) and is_unavailable(t.current)
        )


def resolve_int_or_percent(value: IntOrPercent | None, total: int, default: IntOrPercent) -> int:
    """A count, or a percentage of `total` rounded down with a minimum of 1; None: `default`."""
    chosen = default if value is None else value
    if isinstance(chosen, int):
        return chosen
    return max(1, total * int(chosen.removesuffix("%")) // 100)


def is_unavailable(bd: BundleDeployment) -> bool:
    """The cluster does not run its current deployment ready: not applied yet, or not ready."""
    status = bd.status
    return status is None or status.appliedDeploymentID != bd.spec.deploymentID or not status.ready


def decided_alone(strategy: RolloutStrategy | None, targets: int) -> bool:
    """Whether each cluster's decision depends on nothing but itself and the maxNew count: no
    budget can fill and no partition can wait (no manual partitions, and maxUnavailable is all
    the targets, which every automatic partition then allows too). Creating the clusters a pass
    left to the next one (maxNew) then changes no other cluster's decision."""
    strategy = strategy or RolloutStrategy()
    if strategy.partitions:
        return False
    limit = resolve_int_or_percent(strategy.maxUnavailable, targets, DEFAULT_MAX_UNAVAILABLE)
    return limit >= targets


@dataclass(frozen=True)
class RolloutPlan:
    """A decision per target, and (with gates) where each partition stands, in rollout
    order."""

    decisions: tuple[RolloutDecision, ...]
    partitions: tuple[PartitionProgress, ...] = ()


def plan_rollout(
    strategy: RolloutStrategy | None,
    targets: Sequence[RolloutTarget],
    groups: Sequence[ClusterGroup],
    *,
    bundle_paused: bool,
    halted: str | None = None,
    rollback: Collection[str] = (),
    gates: Gates | None = None,
) -> RolloutPlan:
    """A decision per target, in the order of `targets`; `groups` are the workspace's groups.

    `halted`: why the rollout is halted (None: it is not); `rollback`: the keys of the targets
    to return to their last Ready options; `gates`: bake, approvals and windows (None: none)."""
    strategy = strategy or RolloutStrategy()
    counting = _Counting(strategy.offlineClusters is not OfflineClusters.BLOCK)
    partitions = split_partitions(strategy, targets, groups)
    bundle_budget = _Budget(
        "bundle",
        resolve_int_or_percent(strategy.maxUnavailable, len(targets), DEFAULT_MAX_UNAVAILABLE),
        counting.unavailable(targets),
    )
    allowed_down = resolve_int_or_percent(
        strategy.maxUnavailablePartitions, len(partitions), DEFAULT_MAX_UNAVAILABLE_PARTITIONS
    )
    max_new = strategy.maxNew or DEFAULT_MAX_NEW
    creations = _Creations(max_new, max_new)
    decisions: dict[str, RolloutDecision] = {}
    progress: list[PartitionProgress] = []
    before: PartitionProgress | None = None
    down = 0
    for partition in partitions:
        waiting = (
            f"partition {partition.name!r} waits: {down} partitions unavailable, "
            f"maxUnavailablePartitions is {allowed_down}"
            if down > allowed_down
            else None
        )
        budget = _Budget(
            f"partition {partition.name!r}",
            partition.max_unavailable,
            counting.unavailable(partition.targets),
        )
        members = members_of(partition, counting)
        gated = None if gates is None else gates.hold_before(partition.name, members, before)
        whole = halted or waiting or (gated.message if gated is not None else None)
        window_held: list[str] = []
        for target in partition.targets:
            if target.key in rollback:
                decisions[target.key] = RolloutDecision(
                    target.key, rollback=True, reason=f"rolled back: {halted}"
                )
                continue
            hold = _hold_reason(target, bundle_paused, whole)
            closed = None
            if hold is None and gates is not None:
                closed = gates.closed.get(target.key)
                hold = None if closed is None else closed.message
            budgets = (bundle_budget, budget) if counting.counts(target) else ()
            decision = _decide(target, hold, budgets, creations)
            decisions[target.key] = decision
            if closed is not None and (
                decision.stage or (target.current is None and not decision.create)
            ):
                window_held.append(target.key)
        if budget.used > budget.limit:
            down += 1
        if gates is not None:
            held = _partition_hold(halted, bundle_paused, waiting, gated, members)
            before = gates.progress(partition.name, members, held, window_held)
            progress.append(before)
    return RolloutPlan(tuple(decisions[t.key] for t in targets), tuple(progress))


def members_of(partition: RolloutPartition, counting: _Counting) -> list[Member]:
    """The partition's targets as the gates see them: a paused or (ignored) Offline cluster
    does not count towards its readiness."""
    return [
        (t.key, t.desired_id, t.current, counting.counts(t) and not t.cluster.spec.paused)
        for t in partition.targets
    ]


def partition_members(
    strategy: RolloutStrategy | None,
    targets: Sequence[RolloutTarget],
    groups: Sequence[ClusterGroup],
) -> list[tuple[str, list[Member]]]:
    """Each partition's name and members, in rollout order (for the bake's failures)."""
    strategy = strategy or RolloutStrategy()
    counting = _Counting(strategy.offlineClusters is not OfflineClusters.BLOCK)
    return [(p.name, members_of(p, counting)) for p in split_partitions(strategy, targets, groups)]


def _partition_hold(
    halted: str | None,
    bundle_paused: bool,
    waiting: str | None,
    gated: Hold | None,
    members: Sequence[Member],
) -> Hold | None:
    """What held the whole partition this pass, as its progress says it."""
    if halted is not None:
        return Hold(PartitionState.HELD, halted)
    if bundle_paused:
        return Hold(PartitionState.HELD, "the Bundle is paused")
    if waiting is not None and any(m[2] is None or m[2].spec.deploymentID != m[1] for m in members):
        return Hold(PartitionState.WAITING, waiting)
    return gated


def _hold_reason(target: RolloutTarget, bundle_paused: bool, waiting: str | None) -> str | None:
    if bundle_paused:
        return "bundle paused"
    if target.cluster.spec.paused:
        return "cluster paused"
    return waiting


def _decide(
    target: RolloutTarget,
    hold: str | None,
    budgets: tuple[_Budget, ...],
    creations: _Creations,
) -> RolloutDecision:
    key, current = target.key, target.current
    if current is None:
        if hold is not None:
            return RolloutDecision(key, reason=f"not created: {hold}")
        if creations.left == 0:
            return RolloutDecision(
                key, reason=f"not created: maxNew {creations.limit} reached", capped=True
            )
        creations.left -= 1
        _take(budgets)
        return RolloutDecision(key, promote=True, create=True, reason="created")
    if current.spec.deploymentID == target.desired_id:
        if current.spec.stagedDeploymentID in (None, target.desired_id):
            return RolloutDecision(key, reason="up to date")
        # Nothing that runs changes: dropping a staged deployment nobody wants any more is safe.
        return RolloutDecision(key, promote=True, reason="current is desired: staged withdrawn")
    if hold is not None:
        return RolloutDecision(key, stage=True, reason=f"staged: {hold}")
    if not budgets:
        return RolloutDecision(key, promote=True, reason="promoted: cluster offline")
    if is_unavailable(current):
        return RolloutDecision(key, promote=True, reason="promoted: cluster already unavailable")
    full = next((b for b in budgets if not b.has_room()), None)
    if full is not None:
        return RolloutDecision(key, stage=True, reason=f"staged: {full.describe()}")
    _take(budgets)
    return RolloutDecision(key, promote=True, reason="promoted")


def _take(budgets: tuple[_Budget, ...]) -> None:
    for budget in budgets:
        budget.used += 1


def split_partitions(
    strategy: RolloutStrategy, targets: Sequence[RolloutTarget], groups: Sequence[ClusterGroup]
) -> tuple[RolloutPartition, ...]:
    """The partitions, in rollout order, each with its resolved maxUnavailable."""
    if not strategy.partitions:
        return _auto_partitions(strategy, tuple(targets), "all")
    members: list[list[RolloutTarget]] = [[] for _ in strategy.partitions]
    unmatched: list[RolloutTarget] = []
    criteria = [_as_criteria(p) for p in strategy.partitions]
    for target in targets:
        index = _first_partition(criteria, target.cluster, groups)
        (unmatched if index is None else members[index]).append(target)
    manual = tuple(
        _partition(p.name, tuple(m), _first_set(p.maxUnavailable, strategy.maxUnavailable))
        for p, m in zip(strategy.partitions, members, strict=True)
        if m
    )
    return manual + _auto_partitions(strategy, tuple(unmatched), "unmatched")


def _first_partition(
    criteria: Sequence[BundleTarget], cluster: Cluster, groups: Sequence[ClusterGroup]
) -> int | None:
    cluster_groups = groups_of(cluster, groups)
    return next(
        (
            index
            for index, criterion in enumerate(criteria)
            if evaluate_target(index, criterion, cluster, cluster_groups).matched
        ),
        None,
    )


def _as_criteria(partition: Partition) -> BundleTarget:
    """The partition's cluster criteria as a target, so they match exactly as targets do."""
    return BundleTarget(
        clusterName=partition.clusterName,
        clusterSelector=partition.clusterSelector,
        clusterGroup=partition.clusterGroup,
        clusterGroupSelector=partition.clusterGroupSelector,
    )


def _first_set(*values: IntOrPercent | None) -> IntOrPercent | None:
    return next((v for v in values if v is not None), None)


def _auto_partitions(
    strategy: RolloutStrategy, targets: tuple[RolloutTarget, ...], name: str
) -> tuple[RolloutPartition, ...]:
    if not targets:
        return ()
    threshold = strategy.autoPartitionThreshold
    if len(targets) < (DEFAULT_AUTO_PARTITION_THRESHOLD if threshold is None else threshold):
        return (_partition(name, targets, strategy.maxUnavailable),)
    size = max(
        1,
        resolve_int_or_percent(
            strategy.autoPartitionSize, len(targets), DEFAULT_AUTO_PARTITION_SIZE
        ),
    )
    chunks = [targets[i : i + size] for i in range(0, len(targets), size)]
    return tuple(
        _partition(f"{name}-{n}", chunk, strategy.maxUnavailable)
        for n, chunk in enumerate(chunks, start=1)
    )


def _partition(
    name: str, targets: tuple[RolloutTarget, ...], max_unavailable: IntOrPercent | None
) -> RolloutPartition:
    limit = resolve_int_or_percent(max_unavailable, len(targets), DEFAULT_MAX_UNAVAILABLE)
    return RolloutPartition(name, targets, limit)
