"""Status roll-ups: the Bundle, Cluster and ClusterGroup status built from deployment states.

The input is one `Placement` per (bundle, targeted cluster): its BundleDeployment (None while not
created: Pending), whether the cluster is offline, and the template error planning reported for
it, if any. Every roll-up is deterministic (counts in state order, lists sorted worst state first,
then by name, at most 10 entries) and returns the API models, so equal inputs give equal statuses
and a controller can skip writes that change nothing but lastTransitionTime. Every message is
truncated (bundler.core.bounds): agents write them, and no roll-up may outgrow what etcd stores.

Template errors: a cluster whose values failed to render is still targeted (it counts in
desiredReady) and is reported as ErrApplied with the template message, whether or not it still runs
an earlier BundleDeployment. The manager leaves that earlier deployment alone (the cluster keeps
what it runs), but the cluster is not where the Bundle asks it to be, so the Bundle must not read
Ready even when the old release is.

A Bundle that targets no cluster has readyClusters "0/0" and Ready=False with reason NoTargets:
nothing is deployed, and the Bundle says so. A Cluster with no bundles, or a ClusterGroup with no
clusters, is simply Ready.

The STATE column (`display.state`) is the reason of the Ready condition (`display_state`), so
`kubectl get` and the conditions never disagree: whatever replaces the roll-up's Ready (a rejected
spec, a deletion held, a gated Cluster) goes through `with_ready`, which sets both. A paused Bundle
or Cluster says Paused: its clusters whose new deployment is staged (OutOfSync) or not created
(Pending) are held by the pause, not by the rollout strategy, and a paused object whose clusters
are all Ready is Ready=True with reason Paused.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from bundler.api.bundle import BundleDisplay, BundleStatus
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import (
    AgentFluxStatus,
    AgentStatus,
    ClusterDisplay,
    ClusterGroupDisplay,
    ClusterGroupStatus,
    ClusterStatus,
)
from bundler.api.meta import Condition
from bundler.api.summary import (
    NON_READY_MAX,
    NON_READY_OBJECT_MESSAGE_MAX,
    NON_READY_OBJECTS_MAX,
    DeploymentState,
    DisplayState,
    NonReadyBundle,
    NonReadyResource,
    NonReadyStatus,
    Summary,
)
from bundler.core.bounds import truncated
from bundler.core.flux.requirements import MINIMUM_FLUX
from bundler.core.planning import BundlePlan
from bundler.core.state import (
    UNKNOWN_REASON,
    ConditionType,
    condition,
    deployment_state,
    state_message,
)

REASON_NO_TARGETS = DisplayState.NO_TARGETS.value
REASON_PAUSED = DisplayState.PAUSED.value

StatusT = TypeVar("StatusT", BundleStatus, ClusterStatus)

_SEVERITY = {state: rank for rank, state in enumerate(DeploymentState)}

# The Summary field counting each state.
SUMMARY_FIELD = {
    DeploymentState.ERR_APPLIED: "errApplied",
    DeploymentState.WAIT_APPLIED: "waitApplied",
    DeploymentState.OFFLINE: "offline",
    DeploymentState.NOT_READY: "notReady",
    DeploymentState.PENDING: "pending",
    DeploymentState.OUT_OF_SYNC: "outOfSync",
    DeploymentState.MODIFIED: "modified",
    DeploymentState.READY: "ready",
}

# Shown when no condition explains the state.
_DEFAULT_MESSAGE = {
    DeploymentState.ERR_APPLIED: "the agent failed to apply the deployment",
    DeploymentState.WAIT_APPLIED: "waiting for the agent to apply the deployment",
    DeploymentState.OFFLINE: "the cluster's agent has not checked in recently",
    DeploymentState.NOT_READY: "the release is not ready yet",
    DeploymentState.PENDING: "the BundleDeployment is not created yet",
    DeploymentState.OUT_OF_SYNC: "a newer deployment is staged, held back by the rollout strategy",
    DeploymentState.MODIFIED: "the release was modified on the cluster",
    DeploymentState.READY: "",
}


class PausedBy(StrEnum):
    """Which object's spec.paused holds a placement's new deployment back."""

    BUNDLE = "Bundle"
    CLUSTER = "Cluster"


# The states a pause or a rollout gate explains: the new deployment is staged, or not created.
_HELD_STATES = frozenset({DeploymentState.OUT_OF_SYNC, DeploymentState.PENDING})


def paused_by(bundle_paused: bool, cluster_paused: bool) -> PausedBy | None:
    if bundle_paused:
        return PausedBy.BUNDLE
    return PausedBy.CLUSTER if cluster_paused else None


def pause_message(by: PausedBy, state: DeploymentState) -> str:
    held = (
        "no BundleDeployment is created"
        if state is DeploymentState.PENDING
        else "its new deployment is staged, not promoted"
    )
    return f"{REASON_PAUSED}: the {by.value} is paused (spec.paused): {held}"


@dataclass(frozen=True)
class Gated:
    """Why a rollout gate holds a placement's new deployment back: the gate's word (a Ready
    reason: WaitingForApproval, Baking, OutsideWindow) and what it waits for."""

    reason: str
    message: str


@dataclass(frozen=True)
class Placement:
    """One bundle targeted at one cluster, as the roll-ups see it (keys are namespace/name).
    `paused`: whose spec.paused applies to it (the Bundle's first); `gated`: why a rollout
    gate holds its new deployment back (an approval, a bake, a maintenance window)."""

    bundle: str
    cluster: str
    deployment: BundleDeployment | None
    offline: bool = False
    error: str | None = None
    paused: PausedBy | None = None
    gated: Gated | None = None

    @property
    def state(self) -> DeploymentState:
        if self.error is not None:
            return DeploymentState.ERR_APPLIED
        return deployment_state(self.deployment, offline=self.offline)

    @property
    def message(self) -> str:
        """Why the placement is in its state, truncated: the agent wrote most of it."""
        if self.error is not None:
            return truncated(self.error)
        state = self.state
        if self.held_by_pause:
            assert self.paused is not None
            return pause_message(self.paused, state)
        if self.gated is not None and self.held_by_gate:
            return truncated(f"{self.gated.reason}: {self.gated.message}")
        explained = "" if state is DeploymentState.OFFLINE else state_message(self.deployment)
        return truncated(explained) or _DEFAULT_MESSAGE[state]

    @property
    def objects(self) -> tuple[NonReadyStatus, ...]:
        """The release's objects that are not ready, as the agent copied them from Flux."""
        status = self.deployment.status if self.deployment is not None else None
        if status is None or self.error is not None or self.state is DeploymentState.READY:
            return ()
        return tuple(_bounded_object(o) for o in status.nonReadyStatus[:NON_READY_OBJECTS_MAX])

    @property
    def held_by_pause(self) -> bool:
        return self.paused is not None and self.error is None and self.state in _HELD_STATES

    @property
    def held_by_gate(self) -> bool:
        return (
            self.gated is not None
            and not self.held_by_pause
            and self.error is None
            and self.state in _HELD_STATES
        )

    @property
    def reason(self) -> str:
        """The Ready reason this placement gives when it is the worst: its state, Paused, or the
        gate holding it."""
        if self.held_by_pause:
            return REASON_PAUSED
        if self.gated is not None and self.held_by_gate:
            return self.gated.reason
        return self.state.value


@dataclass(frozen=True, slots=True)
class _Row:
    """One line of a roll-up: a cluster of a bundle, a bundle of a cluster, a cluster of a group."""

    name: str
    state: DeploymentState
    message: str
    reason: str = ""
    objects: tuple[NonReadyStatus, ...] = ()

    @property
    def why(self) -> str:
        return self.reason or self.state.value


def _bounded_object(obj: NonReadyStatus) -> NonReadyStatus:
    """An object as an agent wrote it, its message cut (an agent's text is not trusted)."""
    if len(obj.message) <= NON_READY_OBJECT_MESSAGE_MAX:
        return obj
    cut = obj.message[: NON_READY_OBJECT_MESSAGE_MAX - 3] + "..."
    return obj.model_copy(update={"message": cut})


def display_state(conditions: Sequence[Condition]) -> DisplayState:
    """The STATE column: the Ready condition's reason (NotReady for a reason it has no word
    for, Ready for a True condition without one)."""
    ready = next((c for c in conditions if c.type == ConditionType.READY.value), None)
    if ready is None:
        return DisplayState.PENDING
    try:
        return DisplayState(ready.reason)
    except ValueError:
        return DisplayState.READY if ready.status.value == "True" else DisplayState.NOT_READY


def with_ready(
    status: StatusT, reason: str, message: str, now: str, previous: Sequence[Condition]
) -> StatusT:
    """`status` with its Ready condition False for `reason` (what holds the whole object back:
    a rejected spec, a deletion held, a gated Cluster), and the STATE column saying the same.
    `previous` are the observed conditions (lastTransitionTime is kept while Ready stays
    False)."""
    kind = ConditionType.READY.value
    updated = condition(kind, False, reason, message, now, previous)
    ready = next(c for c in updated if c.type == kind)
    others: list[Condition] = [c for c in status.conditions if c.type != kind]
    conditions = [ready, *others]
    assert status.display is not None
    display = status.display.model_copy(update={"state": display_state(conditions)})
    return status.model_copy(update={"conditions": conditions, "display": display})


def placements_from_plan(
    plan: BundlePlan, existing: Mapping[str, BundleDeployment], offline: Collection[str]
) -> tuple[Placement, ...]:
    """A placement per targeted cluster of `plan`; `existing` and `offline` are by cluster key."""
    errors = {e.cluster: e.message for e in plan.errors}
    return tuple(
        Placement(plan.bundle, key, existing.get(key), key in offline, errors.get(key))
        for key in plan.targeted
    )


def summarize(states: Iterable[DeploymentState]) -> Summary:
    return _summary(Counter(states))


def _summary(counts: Counter[DeploymentState]) -> Summary:
    fields = {SUMMARY_FIELD[state]: counts[state] for state in DeploymentState}
    return Summary(desiredReady=sum(counts.values()), **fields)


def worst_state(states: Iterable[DeploymentState]) -> DeploymentState | None:
    return min(states, key=_SEVERITY.__getitem__, default=None)


def bundle_status(
    placements: Sequence[Placement],
    *,
    observed_generation: int | None,
    resolved_version: str | None,
    previous: Sequence[Condition],
    now: str,
    version: str | None = None,
    paused: bool = False,
) -> BundleStatus:
    """The Bundle's status over its targeted clusters."""
    tally = Tally()
    for placement in placements:
        tally.put(placement)
    return tally.bundle_status(
        observed_generation=observed_generation,
        resolved_version=resolved_version,
        previous=previous,
        now=now,
        version=version,
        paused=paused,
    )


class _NotReady:
    """The not-ready rows of a roll-up, and the NON_READY_MAX worst of them, kept between reads
    while no row that could enter or leave that listing changes: one change does not sort a
    fleet's not-ready rows."""

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._listed: list[_Row] | None = None

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, row: _Row) -> None:
        self._rows[row.name] = row
        self._relist_if_listable(row)

    def discard(self, name: str) -> None:
        row = self._rows.pop(name, None)
        if row is not None:
            self._relist_if_listable(row)

    def listed(self) -> list[_Row]:
        if self._listed is None:
            self._listed = heapq.nsmallest(NON_READY_MAX, self._rows.values(), key=_row_order)
        return self._listed

    def _relist_if_listable(self, row: _Row) -> None:
        """Drop the kept listing if `row`, entering or leaving the not-ready rows, may be in it."""
        listed = self._listed
        if listed is not None and (
            len(listed) < NON_READY_MAX or _row_order(row) <= _row_order(listed[-1])
        ):
            self._listed = None


class Tally:
    """A Bundle's placements by cluster, counted as they are put, so that the status after one
    placement's change costs that change plus listing the clusters that are not ready."""

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._errors: set[str] = set()
        self._counts: Counter[DeploymentState] = Counter()
        self._not_ready = _NotReady()

    def put(self, placement: Placement) -> None:
        """Add the placement, or replace the one on its cluster."""
        self.remove(placement.cluster)
        row = _Row(
            placement.cluster,
            placement.state,
            placement.message,
            placement.reason,
            placement.objects,
        )
        self._rows[row.name] = row
        self._counts[row.state] += 1
        if row.state is not DeploymentState.READY:
            self._not_ready.add(row)
        if placement.error is not None:
            self._errors.add(row.name)

    def remove(self, cluster: str) -> None:
        row = self._rows.pop(cluster, None)
        if row is None:
            return
        self._counts[row.state] -= 1
        self._not_ready.discard(cluster)
        self._errors.discard(cluster)

    def clusters(self) -> set[str]:
        return set(self._rows)

    def bundle_status(
        self,
        *,
        observed_generation: int | None,
        resolved_version: str | None,
        previous: Sequence[Condition],
        now: str,
        version: str | None = None,
        paused: bool = False,
    ) -> BundleStatus:
        """`version`: the chart version shown (resolved, or the exact spec version)."""
        total = len(self._rows)
        listed = self._not_ready.listed()
        if total:
            note = _template_note(len(self._errors))
            pause = _pause_note("Bundle", paused)
            ready = _ready_from(
                total, self._counts, listed[:1], "clusters", note, previous, now, pause
            )
        else:
            ready = condition(
                ConditionType.READY.value,
                False,
                REASON_NO_TARGETS,
                "no cluster is targeted, nothing is deployed: check spec.targets",
                now,
                previous,
            )
        fields = {SUMMARY_FIELD[state]: self._counts[state] for state in DeploymentState}
        ready_count = self._counts[DeploymentState.READY]
        return BundleStatus(
            observedGeneration=observed_generation,
            resolvedVersion=resolved_version,
            summary=Summary(desiredReady=total, **fields),
            display=BundleDisplay(
                readyClusters=f"{ready_count}/{total}",
                state=display_state(ready),
                version=resolved_version or version,
            ),
            nonReady=[
                NonReadyResource(
                    cluster=r.name, state=r.state, message=r.message, nonReadyStatus=list(r.objects)
                )
                for r in listed
            ],
            conditions=ready,
        )


def cluster_status(
    placements: Sequence[Placement],
    *,
    namespace: str | None,
    agent: AgentStatus | None,
    previous: Sequence[Condition],
    now: str,
    paused: bool = False,
) -> ClusterStatus:
    """A Cluster's status over the bundles placed on it; namespace and agent pass through."""
    rows = [_Row(p.bundle, p.state, p.message, p.reason, p.objects) for p in placements]
    pause = _pause_note("Cluster", paused)
    conditions = _ready_condition(rows, "bundles", "", previous, now, pause)
    return ClusterStatus(
        namespace=namespace,
        agent=agent,
        summary=summarize(r.state for r in rows),
        display=ClusterDisplay(readyBundles=_ratio(rows), state=display_state(conditions)),
        nonReadyBundles=[
            NonReadyBundle(
                bundle=r.name, state=r.state, message=r.message, nonReadyStatus=list(r.objects)
            )
            for r in _listed(rows)
        ],
        conditions=conditions,
    )


def flux_supported_condition(
    conditions: Sequence[Condition], flux: AgentFluxStatus, now: str
) -> list[Condition]:
    """`conditions` with FluxSupported as the cluster's agent last found its Flux."""
    if flux.supported:
        message = f"Flux serves every API bundler writes (Flux {MINIMUM_FLUX} or later)"
        return condition(ConditionType.FLUX_SUPPORTED, True, "Supported", message, now, conditions)
    return condition(
        ConditionType.FLUX_SUPPORTED,
        False,
        flux.reason or UNKNOWN_REASON,
        flux.message or "",
        now,
        conditions,
    )


@dataclass(frozen=True)
class GroupMember:
    """What one member cluster adds to its groups' status: its row (its worst placement) and
    how many of its placements are in each state. Worked out once per change of the cluster's
    placements, whichever groups it is in."""

    row: _Row
    states: tuple[tuple[DeploymentState, int], ...]


def group_member(cluster: str, placements: Sequence[Placement]) -> GroupMember:
    states = Counter(p.state for p in placements)
    return GroupMember(_cluster_row(cluster, placements), tuple(states.items()))


def cluster_group_status(
    clusters: Sequence[str],
    placements: Sequence[Placement],
    *,
    previous: Sequence[Condition],
    now: str,
) -> ClusterGroupStatus:
    """A ClusterGroup's status over its member clusters (keys) and the placements on them.

    A cluster is not ready when any of its placements is not; it is listed with its worst state.
    """
    by_cluster: dict[str, list[Placement]] = {key: [] for key in sorted(set(clusters))}
    for placement in placements:
        if placement.cluster in by_cluster:
            by_cluster[placement.cluster].append(placement)
    members = [group_member(key, placed) for key, placed in by_cluster.items()]
    return group_status(members, previous=previous, now=now)


def group_status(
    members: Sequence[GroupMember], *, previous: Sequence[Condition], now: str
) -> ClusterGroupStatus:
    """A ClusterGroup's status from what each member cluster adds."""
    tally = GroupTally()
    for member in members:
        tally.put(member)
    return tally.group_status(previous=previous, now=now)


class GroupTally:
    """A ClusterGroup's members, counted as they are put, so that the status after one member's
    change costs that change plus listing the clusters that are not ready."""

    def __init__(self) -> None:
        self._members: dict[str, GroupMember] = {}
        self._rows: Counter[DeploymentState] = Counter()
        self._placements: Counter[DeploymentState] = Counter()
        self._not_ready = _NotReady()

    def put(self, member: GroupMember) -> None:
        """Add the member, or replace the one of its cluster."""
        self.remove(member.row.name)
        self._members[member.row.name] = member
        self._rows[member.row.state] += 1
        self._placements.update(dict(member.states))
        if member.row.state is not DeploymentState.READY:
            self._not_ready.add(member.row)

    def remove(self, cluster: str) -> None:
        member = self._members.pop(cluster, None)
        if member is None:
            return
        self._rows[member.row.state] -= 1
        self._placements.subtract(dict(member.states))
        self._not_ready.discard(cluster)

    def clusters(self) -> set[str]:
        return set(self._members)

    def group_status(self, *, previous: Sequence[Condition], now: str) -> ClusterGroupStatus:
        total, listed = len(self._members), self._not_ready.listed()
        not_ready = len(self._not_ready)
        conditions = _ready_from(total, self._rows, listed[:1], "clusters", "", previous, now)
        return ClusterGroupStatus(
            clusterCount=total,
            nonReadyClusterCount=not_ready,
            nonReadyClusters=[r.name for r in listed],
            summary=_summary(+self._placements),
            display=ClusterGroupDisplay(
                readyClusters=f"{total - not_ready}/{total}", state=display_state(conditions)
            ),
            conditions=conditions,
        )


def _cluster_row(cluster: str, placements: Sequence[Placement]) -> _Row:
    worst = min(placements, key=lambda p: (_SEVERITY[p.state], p.bundle), default=None)
    if worst is None:
        return _Row(cluster, DeploymentState.READY, "")
    return _Row(cluster, worst.state, f"{worst.bundle}: {worst.message}", worst.reason)


def _row_order(row: _Row) -> tuple[int, str]:
    return _SEVERITY[row.state], row.name


def _not_ready(rows: Iterable[_Row]) -> list[_Row]:
    pending = (r for r in rows if r.state is not DeploymentState.READY)
    return sorted(pending, key=_row_order)


def _listed(rows: Iterable[_Row]) -> list[_Row]:
    return _not_ready(rows)[:NON_READY_MAX]


def _ratio(rows: Sequence[_Row]) -> str:
    ready = sum(1 for r in rows if r.state is DeploymentState.READY)
    return f"{ready}/{len(rows)}"


def _template_note(errors: int) -> str:
    return f"template errors on {errors} of them" if errors else ""


def _pause_note(kind: str, paused: bool) -> str:
    if not paused:
        return ""
    return f"the {kind} is paused (spec.paused): changes are staged, not promoted"


def _ready_condition(
    rows: Sequence[_Row],
    noun: str,
    note: str,
    previous: Sequence[Condition],
    now: str,
    pause: str = "",
) -> list[Condition]:
    """Ready=True when every row is Ready; else the worst state as reason and a counted summary."""
    counts = Counter(r.state for r in rows)
    first = _not_ready(rows)[:1]
    return _ready_from(len(rows), counts, first, noun, note, previous, now, pause)


def _ready_from(
    total: int,
    counts: Mapping[DeploymentState, int],
    first: Sequence[_Row],
    noun: str,
    note: str,
    previous: Sequence[Condition],
    now: str,
    pause: str = "",
) -> list[Condition]:
    """The Ready condition from the count of rows in each state and the first not-ready row;
    `pause` says the object is paused (reason Paused while it is Ready)."""
    if not first:
        message = f"all {total} {noun} ready" if total else f"no {noun}"
        if pause:
            message = f"{message}; {pause}"
        reason = REASON_PAUSED if pause else DisplayState.READY.value
        return condition(ConditionType.READY.value, True, reason, message, now, previous)
    not_ready = sum(n for s, n in counts.items() if s is not DeploymentState.READY)
    by_state = ", ".join(
        f"{s.value}({counts[s]})"
        for s in DeploymentState
        if s is not DeploymentState.READY and counts.get(s)
    )
    worst = first[0]
    parts = [f"{not_ready} of {total} {noun} not ready: {by_state}", note]
    parts.append(f"{worst.name}: {worst.message}" if worst.message else "")
    message = "; ".join(part for part in parts if part)
    return condition(ConditionType.READY.value, False, worst.why, message, now, previous)
