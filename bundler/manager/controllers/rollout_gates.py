"""The rollout gates of one Bundle pass: what bundler.core.rollout_gates needs, read from the
Bundle, its clusters and the manager's memory, and what the pass then tells the status.

The manager's memory of each partition (readySince, baked, for which deployments) is what the
last pass recorded in the Bundle's outcome, or, after a restart or a rejected pass, what the
Bundle's status.rollout shows. Schedules are compiled once per distinct text (an invalid Cluster
schedule compiles to its error: that cluster gets nothing new). The pass looks again when the
next bake ends, a held cluster's window opens, or the Bundle's own schedule opens or closes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import ValidationError

from bundler.api.bundle import Bundle, RolloutStatus
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.schedule import Schedule, ScheduleStatus
from bundler.core.approvals import approved
from bundler.core.durations import parse_duration
from bundler.core.planning import key as ref
from bundler.core.rollout import RolloutTarget, partition_members
from bundler.core.rollout_gates import (
    Gate,
    GateReason,
    Gates,
    PartitionProgress,
    PartitionRecord,
    WindowHold,
    bake_failures,
    first_gate,
    next_bake_end,
    records_of,
    rollout_status,
    window_hold,
)
from bundler.core.schedule import CompiledSchedule, compile_schedule, next_edge, schedule_status
from bundler.core.summary import Gated
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError
from bundler.store.protocol import Obj

# Seconds past an edge (a bake's end, a window's start) to look again: any instant after it will do.
EDGE_MARGIN = 0.01
# How often a deletion that no window allows within a year looks again (a schedule may change).
NO_WINDOW_RECHECK = 86400.0


@dataclass(frozen=True)
class GatedOutcome:
    """What the gates of a pass tell the Bundle's status: its partitions, the gate it waits at,
    why each held cluster waits (by cluster), and its own schedule."""

    rollout: RolloutStatus | None = None
    gate: Gate | None = None
    holds: Mapping[str, Gated] = field(default_factory=dict)
    schedule: ScheduleStatus | None = None


def cluster_schedule(cluster: Cluster) -> CompiledSchedule | InvalidInputError | None:
    schedule = cluster.spec.schedule
    if schedule is None:
        return None
    obj = f"Cluster {cluster.metadata.namespace}/{cluster.metadata.name}"
    return _compiled(_text(schedule), obj)


def bundle_schedule(bundle: Bundle) -> CompiledSchedule | None:
    """The Bundle's schedule (validate_bundle has checked it)."""
    schedule = bundle.spec.schedule
    if schedule is None:
        return None
    found = _compiled(_text(schedule), bundle_ref(bundle))
    if isinstance(found, InvalidInputError):
        raise found
    return found


def gates_of(
    bundle: Bundle,
    targets: Sequence[RolloutTarget],
    now: datetime,
    previous: Mapping[str, PartitionRecord],
) -> Gates | None:
    """The gates of this pass; None when the Bundle and its clusters have none."""
    strategy = bundle.spec.rolloutStrategy
    bake = strategy.bakeTime if strategy is not None else None
    approval = strategy.approval if strategy is not None else None
    own = bundle_schedule(bundle)
    closed = {}
    for target in targets:
        hold = window_hold(own, cluster_schedule(target.cluster), now)
        if hold is not None:
            closed[target.key] = hold
    scheduled = own is not None or any(t.cluster.spec.schedule for t in targets)
    if bake is None and approval is None and not scheduled:
        return None
    generation = bundle.metadata.generation or 0
    return Gates(
        now,
        bundle=ref(bundle.metadata.namespace, bundle.metadata.name),
        generation=generation,
        bake=None if bake is None else parse_duration(bake),
        approval=approval,
        approvals=approved(bundle.metadata.annotations, generation),
        manual=frozenset(p.name for p in strategy.partitions) if strategy else frozenset(),
        previous=previous,
        closed=closed,
    )


def previous_records(recorded: RolloutStatus | None, observed: Obj) -> dict[str, PartitionRecord]:
    """The partition memory: the last pass's (`recorded`), else the Bundle's status."""
    if recorded is not None:
        return records_of(recorded)
    shown = (observed.get("status") or {}).get("rollout")
    if not isinstance(shown, dict):
        return {}
    try:
        return records_of(RolloutStatus.model_validate(shown))
    except ValidationError:
        return {}


def bake_failed(
    bundle: Bundle,
    targets: Sequence[RolloutTarget],
    groups: Sequence[ClusterGroup],
    gates: Gates | None,
) -> frozenset[str]:
    """The clusters not Ready while their partition bakes (failures for onFailure)."""
    strategy = bundle.spec.rolloutStrategy
    if gates is None or gates.bake is None or strategy is None or strategy.onFailure is None:
        return frozenset()
    return bake_failures(partition_members(strategy, targets, groups), gates.previous)


def gated_outcome(
    bundle: Bundle, gates: Gates | None, partitions: Sequence[PartitionProgress]
) -> GatedOutcome:
    if gates is None:
        return GatedOutcome()
    own = bundle_schedule(bundle)
    holds: dict[str, Gated] = {}
    gate = first_gate(partitions)
    for partition in partitions:
        if partition.gate is not None:
            for key in partition.gated:
                holds[key] = Gated(partition.gate.value, partition.message)
        for key in partition.window_held:
            holds[key] = Gated(GateReason.OUTSIDE_WINDOW.value, gates.closed[key].message)
    return GatedOutcome(
        rollout_status(partitions),
        gate,
        holds,
        None if own is None else schedule_status(own, gates.now),
    )


def seconds_to_look_again(
    bundle: Bundle, gates: Gates | None, partitions: Sequence[PartitionProgress]
) -> float | None:
    """Clock seconds until the next bake ends, a held cluster's window opens, or the Bundle's
    own schedule opens or closes; None: nothing due."""
    if gates is None:
        return None
    now = gates.now
    moments = [next_bake_end(partitions, now)]
    moments.extend(hold.opens for hold in gates.closed.values())
    own = bundle_schedule(bundle)
    if own is not None:
        moments.append(next_edge(own, now))
    due = [(m - now).total_seconds() for m in moments if m is not None and m > now]
    return min(due) + EDGE_MARGIN if due else None


def deletion_holds(
    bundle: Bundle | None, clusters: Mapping[str, Cluster | None], now: datetime
) -> dict[str, WindowHold]:
    """The clusters (of `clusters`, by reference) where a deleted Bundle's release waits for a
    maintenance window; a Cluster gone (None) or a Bundle that does not parse waits for none."""
    own = None
    if bundle is not None:
        try:
            own = bundle_schedule(bundle)
        except InvalidInputError:
            own = None
    held = {}
    for key, cluster in clusters.items():
        if cluster is None:
            continue
        hold = window_hold(own, cluster_schedule(cluster), now)
        if hold is not None:
            held[key] = hold
    return held


def seconds_until_open(held: Mapping[str, WindowHold], now: datetime) -> float:
    """Clock seconds until the first of `held` opens (a day when none opens within a year)."""
    opens = [(h.opens - now).total_seconds() for h in held.values() if h.opens is not None]
    return max(0.0, min(opens)) + EDGE_MARGIN if opens else NO_WINDOW_RECHECK


def _text(schedule: Schedule) -> str:
    return json.dumps(schedule.to_wire(), sort_keys=True)


@functools.lru_cache(maxsize=1024)
def _compiled(text: str, obj: str) -> CompiledSchedule | InvalidInputError:
    try:
        schedule = Schedule.model_validate_json(text)
        return compile_schedule(schedule, obj=obj, field="spec.schedule")
    except InvalidInputError as err:
        return err
