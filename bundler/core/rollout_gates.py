"""Rollout gates: bake time, approvals and maintenance windows, decided per partition. Pure.

bundler.core.rollout walks the partitions in order; for each, `Gates.hold_before` says whether
the whole partition waits, a cluster outside its maintenance window waits on its own
(`Gates.closed`), and `Gates.progress` says where the partition stands once its clusters are
decided. "Now" and every memory come in as data:

- Bake (`rolloutStrategy.bakeTime`). A partition is Ready when every cluster it counts (not
  paused, not Offline unless offlineClusters is Block) runs its wanted deployment Ready. Its
  `readySince` is when the manager first saw that for the partition's current deployments
  (`deployments`, a digest of its clusters and their wanted IDs; kept in the Bundle's
  status.rollout and handed back as `previous`), and it is `baked` once it has been Ready for
  bakeTime since then and is Ready still. With a bake, partitions go one after the other: a
  partition waits until the one before it is baked. A cluster that is not Ready while its
  partition, having been Ready on these deployments, is not baked yet has failed the rollout
  (`bake_failures`, counted by bundler.core.rollout_failures).
- Approval (`rolloutStrategy.approval`). A partition named there (every partition when no name
  is given) that has something new for a cluster waits until the Bundle's annotation approves it
  for the Bundle's current generation (bundler.core.approvals).
- Windows (`spec.schedule` of the Bundle and of each Cluster, bundler.core.schedule). A cluster
  outside its window gets nothing new: its change is staged and it is not created.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from bundler.api.bundle import Approval, PartitionState, PartitionStatus, RolloutStatus
from bundler.api.bundledeployment import BundleDeployment
from bundler.core.approvals import Approved, needs_approval
from bundler.core.schedule import CompiledSchedule, Schedules
from bundler.errors import InvalidInputError

# What the status and the GATE column name when held clusters are many.
_NAMED_MAX = 3


class GateReason(StrEnum):
    """Why a rollout waits at a gate: the Bundle's RolloutGated reason."""

    WAITING_FOR_APPROVAL = "WaitingForApproval"
    BAKING = "Baking"
    OUTSIDE_WINDOW = "OutsideWindow"


@dataclass(frozen=True)
class PartitionRecord:
    """What the Bundle's status remembers of one partition (`readySince`, `baked`), valid for
    the deployments of `digest`."""

    digest: str
    ready_since: datetime | None
    baked: bool


def records_of(status: RolloutStatus | None) -> dict[str, PartitionRecord]:
    """The partition records a Bundle's status.rollout holds, by partition name."""
    found = {}
    for partition in status.partitions if status is not None else []:
        if partition.deployments is None:
            continue
        found[partition.name] = PartitionRecord(
            partition.deployments, _parsed(partition.readySince), partition.baked
        )
    return found


@dataclass(frozen=True)
class WindowHold:
    """A cluster outside its maintenance window, until `opens` (None: no window ahead)."""

    message: str
    opens: datetime | None


@dataclass(frozen=True)
class Hold:
    """What keeps a whole partition from its new deployments this pass, and the gate it is
    (None: not a gate, e.g. a halt or maxUnavailablePartitions)."""

    state: PartitionState
    message: str
    gate: GateReason | None = None


def window_hold(
    bundle: CompiledSchedule | None,
    cluster: CompiledSchedule | InvalidInputError | None,
    now: datetime,
) -> WindowHold | None:
    """Why a cluster gets nothing new at `now` under the Bundle's and its own schedule (an
    invalid one of the Cluster's allows nothing), or None when both allow."""
    if isinstance(cluster, InvalidInputError):
        return WindowHold(
            f"the Cluster's spec.schedule is invalid, so nothing changes: {cluster}", None
        )
    owned = [(whose, s) for whose, s in (("Bundle", bundle), ("Cluster", cluster)) if s is not None]
    if not owned:
        return None
    both = Schedules(tuple(s for _, s in owned))
    if both.is_open(now):
        return None
    opens = both.next_open(now)
    closed = " and the ".join(f"{whose}'s" for whose, s in owned if not s.is_open(now))
    until = f"opens {iso(opens)}" if opens is not None else "none opens within a year"
    return WindowHold(f"outside the {closed} maintenance window ({until})", opens)


# One target of a partition, as the gates see it: (key, desired ID, its deployment, counted).
Member = tuple[str, str, BundleDeployment | None, bool]


@dataclass(frozen=True)
class PartitionProgress:
    name: str
    clusters: int
    state: PartitionState
    digest: str
    ready_since: datetime | None = None
    baked: bool = False
    message: str = ""
    bake_ends: datetime | None = None
    # What holds the partition, as the Bundle's gate says it (None: no gate), and its clusters
    # with something new that the gate keeps from it.
    gate: GateReason | None = None
    gated: tuple[str, ...] = ()
    window_held: tuple[str, ...] = ()

    def to_api(self) -> PartitionStatus:
        return PartitionStatus(
            name=self.name,
            clusters=self.clusters,
            state=self.state,
            readySince=None if self.ready_since is None else iso(self.ready_since),
            baked=self.baked,
            deployments=self.digest,
            message=self.message,
        )


@dataclass(frozen=True)
class Gate:
    """Where a rollout waits at a gate: the first partition (in rollout order) that does."""

    reason: GateReason
    partition: str
    message: str
    display: str


@dataclass(frozen=True)
class Gates:
    """Everything the gates need for one pass. `bundle` names the Bundle in messages."""

    now: datetime
    bundle: str = ""
    generation: int = 0
    bake: timedelta | None = None
    approval: Approval | None = None
    approvals: Approved = field(default_factory=Approved)
    manual: frozenset[str] = frozenset()
    previous: Mapping[str, PartitionRecord] = field(default_factory=dict)
    closed: Mapping[str, WindowHold] = field(default_factory=dict)

    def hold_before(
        self, name: str, members: Sequence[Member], before: PartitionProgress | None
    ) -> Hold | None:
        """Whether partition `name` waits as a whole this pass, and why: the partition before
        it is not baked yet (with a bake), or it waits for an approval."""
        if not any(_has_work(m) for m in members):
            return None
        if self.bake is not None and before is not None and not before.baked:
            baking = before.state is PartitionState.BAKING
            return Hold(
                PartitionState.WAITING, _bake_wait(before), GateReason.BAKING if baking else None
            )
        if needs_approval(self.approval, name, name in self.manual) and not (
            self.approvals.covers(name)
        ):
            command = f"bundler rollout approve {self.bundle} --partition {name}"
            return Hold(
                PartitionState.WAITING_FOR_APPROVAL,
                f"partition {name!r} waits for approval of generation {self.generation} "
                f"({command})",
                GateReason.WAITING_FOR_APPROVAL,
            )
        return None

    def progress(
        self,
        name: str,
        members: Sequence[Member],
        held: Hold | None,
        window_held: Sequence[str],
    ) -> PartitionProgress:
        """Where partition `name` stands after this pass decided its clusters; `held` is what
        held it as a whole (its gate, a halt, a pause), `window_held` its clusters kept back
        by their windows."""
        digest = _digest(members)
        ready = all(_ready(m) for m in members if m[3])
        previous = self.previous.get(name)
        same = previous is not None and previous.digest == digest
        ready_since = previous.ready_since if same and previous is not None else None
        if ready_since is None and ready:
            ready_since = self.now
        baked = same and previous is not None and previous.baked
        bake_ends = None
        if self.bake is not None and ready_since is not None and not baked:
            bake_ends = ready_since + self.bake
            baked = ready and bake_ends <= self.now
        if held is not None:
            state, message = held.state, held.message
        elif ready:
            state, message = _ready_state(self.bake, baked, bake_ends)
        elif window_held:
            state = PartitionState.OUTSIDE_WINDOW
            message = _window_message(window_held, self.closed)
        else:
            state, message = PartitionState.ROLLING_OUT, "new deployments are not all Ready yet"
        return PartitionProgress(
            name,
            len(members),
            state,
            digest,
            ready_since,
            baked,
            message,
            None if baked else bake_ends,
            None if held is None else held.gate,
            tuple(m[0] for m in members if _has_work(m)) if held is not None else (),
            tuple(window_held),
        )


def first_gate(progress: Sequence[PartitionProgress]) -> Gate | None:
    """The gate the rollout waits at: the first partition waiting for an approval, for the bake
    of the one before it, or with clusters outside their windows."""
    earlier: PartitionProgress | None = None
    for partition in progress:
        if partition.gate is GateReason.WAITING_FOR_APPROVAL:
            return _gate(GateReason.WAITING_FOR_APPROVAL, partition.name, partition.message)
        if partition.gate is GateReason.BAKING and earlier is not None:
            return _gate(GateReason.BAKING, earlier.name, partition.message)
        if partition.window_held:
            held = partition.window_held
            shown = held[0] if len(held) == 1 else f"{len(held)} clusters"
            return Gate(
                GateReason.OUTSIDE_WINDOW,
                partition.name,
                _window_message(held, {}),
                f"{GateReason.OUTSIDE_WINDOW.value}({shown})",
            )
        earlier = partition
    return None


def bake_failures(
    partitions: Sequence[tuple[str, Sequence[Member]]], previous: Mapping[str, PartitionRecord]
) -> frozenset[str]:
    """Clusters that are not Ready on their wanted deployment while their partition, having
    been Ready on these deployments, is not baked yet (`partitions`: name and members)."""
    failed: set[str] = set()
    for name, members in partitions:
        record = previous.get(name)
        if record is None or record.ready_since is None or record.baked:
            continue
        if record.digest != _digest(members):
            continue
        failed.update(m[0] for m in members if m[3] and not _ready(m))
    return frozenset(failed)


def rollout_status(progress: Sequence[PartitionProgress]) -> RolloutStatus:
    return RolloutStatus(partitions=[p.to_api() for p in progress])


def next_bake_end(progress: Sequence[PartitionProgress], now: datetime) -> datetime | None:
    """When the next bake under way ends (the manager looks again then)."""
    ends = [p.bake_ends for p in progress if p.bake_ends is not None and p.bake_ends > now]
    return min(ends) if ends else None


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _gate(reason: GateReason, partition: str, message: str) -> Gate:
    return Gate(reason, partition, message, f"{reason.value}({partition})")


def _bake_wait(before: PartitionProgress) -> str:
    if before.state is PartitionState.BAKING and before.bake_ends is not None:
        return (
            f"waits for partition {before.name!r} to bake: Ready since "
            f"{iso(before.ready_since or before.bake_ends)}, until {iso(before.bake_ends)}"
        )
    return f"waits for partition {before.name!r} to be Ready and baked first"


def _ready_state(
    bake: timedelta | None, baked: bool, bake_ends: datetime | None
) -> tuple[PartitionState, str]:
    if bake is None or baked or bake_ends is None:
        return PartitionState.READY, "every cluster runs its new deployment Ready"
    return PartitionState.BAKING, f"Ready, baking until {iso(bake_ends)}"


def _window_message(held: Sequence[str], closed: Mapping[str, WindowHold]) -> str:
    named = ", ".join(held[:_NAMED_MAX])
    more = f" and {len(held) - _NAMED_MAX} more" if len(held) > _NAMED_MAX else ""
    first = closed.get(held[0]) if held else None
    why = f": {first.message}" if first is not None else ""
    return f"outside their maintenance window: {named}{more}{why}"


def _has_work(member: Member) -> bool:
    _, desired, current, _ = member
    return current is None or current.spec.deploymentID != desired


def _ready(member: Member) -> bool:
    _, desired, current, _ = member
    status = current.status if current is not None else None
    return (
        current is not None
        and status is not None
        and current.spec.deploymentID == desired
        and status.appliedDeploymentID == desired
        and status.ready
    )


def _digest(members: Sequence[Member]) -> str:
    lines = sorted(f"{key} {desired}" for key, desired, _, _ in members)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _parsed(moment: str | None) -> datetime | None:
    if moment is None:
        return None
    try:
        parsed = datetime.fromisoformat(moment)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
