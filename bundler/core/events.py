"""Kubernetes Events for the transitions a user acts on. Pure: what to say, and how often.

The manager says what happened to a Bundle or a Cluster as core/v1 Events on that object (what
`kubectl describe` and `kubectl events` show), in Kubernetes' style: a CamelCase reason, type
Normal or Warning, a sentence as the message. Each Event is decided from the status the manager is
about to write against the status it observed, so a transition is told once, when it happens, and a
manager restarting over an unchanged world tells nothing:

- Bundle, Normal `RolloutStarted`: a new generation is planned (observedGeneration moves, and the
  Bundle is not rejected: InvalidSpec, VersionNotResolved, CredentialsNotFound);
- Bundle, Warning `RolloutHalted`, `RolledBack`, `DeletionHeld`, `InvalidSpec`: Ready turns False
  with that reason;
- Bundle, Normal `WaitingForApproval`: the rollout comes to a partition that waits for an
  approval (RolloutGated turns to that reason, or names another partition);
- Cluster, Warning `ClusterOffline`: Ready turns False with reason Offline (after being something
  else; a Cluster's first status is no transition);
- Cluster, Normal `ClusterOnline`: Ready leaves reason Offline;
- Cluster, Normal `FluxInstalled`, `AgentConnected`, `Bootstrapped`: that bootstrap phase's
  condition turns True; Warning `BootstrapRemoved`: Bootstrapped turns False for that reason.

Events are bounded (`EventBudget`), as client-go's EventCorrelator bounds a recorder: the same
reason and message on the same object is told once per `DUPLICATE_WINDOW_S`, each object has a
token bucket (a burst, then one Event per `PER_OBJECT_REFILL_S`), and so does the whole manager.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bundler.api.meta import Condition, ConditionStatus
from bundler.core.bounds import truncated
from bundler.core.state import ConditionType

# Kubernetes' bound on an Event's message (events.k8s.io/v1 note; core/v1 has none but a kubectl
# column): longer text is cut.
EVENT_MESSAGE_MAX = 1024
COMPONENT = "bundler-manager"

# The duplicate window, and the per-object and global token buckets.
DUPLICATE_WINDOW_S = 600.0
PER_OBJECT_BURST = 10
PER_OBJECT_REFILL_S = 60.0
GLOBAL_BURST = 100
GLOBAL_PER_SECOND = 5.0
# How many objects (and duplicate keys) the budget remembers; the oldest are forgotten.
REMEMBERED_MAX = 10_000


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


class Reason(StrEnum):
    ROLLOUT_STARTED = "RolloutStarted"
    ROLLOUT_HALTED = "RolloutHalted"
    ROLLED_BACK = "RolledBack"
    DELETION_HELD = "DeletionHeld"
    INVALID_SPEC = "InvalidSpec"
    WAITING_FOR_APPROVAL = "WaitingForApproval"
    CLUSTER_OFFLINE = "ClusterOffline"
    CLUSTER_ONLINE = "ClusterOnline"
    FLUX_INSTALLED = "FluxInstalled"
    AGENT_CONNECTED = "AgentConnected"
    BOOTSTRAPPED = "Bootstrapped"
    BOOTSTRAP_REMOVED = "BootstrapRemoved"


@dataclass(frozen=True)
class EventSpec:
    """One thing to tell about an object."""

    type: EventType
    reason: Reason
    message: str


# A Bundle's Ready reasons that are worth a Warning the moment they appear.
_BUNDLE_WARNINGS = (
    Reason.ROLLOUT_HALTED,
    Reason.ROLLED_BACK,
    Reason.DELETION_HELD,
    Reason.INVALID_SPEC,
)
# A Bundle whose generation was not planned (rejected): no rollout starts.
_NOT_PLANNED = frozenset({Reason.INVALID_SPEC.value, "VersionNotResolved", "CredentialsNotFound"})
_OFFLINE = "Offline"
_BOOTSTRAP_PHASES = (Reason.FLUX_INSTALLED, Reason.AGENT_CONNECTED, Reason.BOOTSTRAPPED)


def _ready(conditions: Sequence[Condition]) -> Condition | None:
    return next((c for c in conditions if c.type == ConditionType.READY.value), None)


def _find(conditions: Sequence[Condition], type: str) -> Condition | None:
    return next((c for c in conditions if c.type == type), None)


def bundle_events(
    before: Sequence[Condition],
    after: Sequence[Condition],
    *,
    observed_generation: int | None,
    generation: int | None,
    targeted: int,
) -> list[EventSpec]:
    """What to tell about a Bundle whose status goes from `before` (observed, at generation
    `observed_generation`) to `after` (for `generation`, over `targeted` clusters)."""
    events = []
    old, new = _ready(before), _ready(after)
    new_reason = new.reason if new is not None and new.status is ConditionStatus.FALSE else None
    rejected = new_reason in _NOT_PLANNED
    if generation is not None and generation != observed_generation and not rejected:
        plural = "" if targeted == 1 else "s"
        events.append(
            EventSpec(
                EventType.NORMAL,
                Reason.ROLLOUT_STARTED,
                f"rolling out generation {generation} to {targeted} targeted cluster{plural}",
            )
        )
    was = old.reason if old is not None and old.status is ConditionStatus.FALSE else None
    for reason in _BUNDLE_WARNINGS:
        if new_reason == reason and was != reason:
            assert new is not None
            events.append(EventSpec(EventType.WARNING, reason, new.message))
    gated_before = _find(before, ConditionType.ROLLOUT_GATED.value)
    gated = _find(after, ConditionType.ROLLOUT_GATED.value)
    if (
        gated is not None
        and gated.reason == Reason.WAITING_FOR_APPROVAL
        and (
            gated_before is None
            or (gated_before.reason, gated_before.message) != (gated.reason, gated.message)
        )
    ):
        events.append(EventSpec(EventType.NORMAL, Reason.WAITING_FOR_APPROVAL, gated.message))
    return events


def cluster_events(before: Sequence[Condition], after: Sequence[Condition]) -> list[EventSpec]:
    """What to tell about a Cluster whose conditions go from `before` to `after`."""
    events = []
    old, new = _ready(before), _ready(after)
    was_offline = old is not None and old.reason == _OFFLINE
    offline = new is not None and new.reason == _OFFLINE
    if offline and old is not None and not was_offline:
        assert new is not None
        events.append(EventSpec(EventType.WARNING, Reason.CLUSTER_OFFLINE, new.message))
    if was_offline and new is not None and not offline:
        events.append(
            EventSpec(EventType.NORMAL, Reason.CLUSTER_ONLINE, "the agent checks in again")
        )
    for phase in _BOOTSTRAP_PHASES:
        previous, current = _find(before, phase.value), _find(after, phase.value)
        turned_true = current is not None and current.status is ConditionStatus.TRUE
        if turned_true and (previous is None or previous.status is not ConditionStatus.TRUE):
            assert current is not None
            events.append(EventSpec(EventType.NORMAL, phase, current.message))
    removed = _find(after, Reason.BOOTSTRAPPED.value)
    previous = _find(before, Reason.BOOTSTRAPPED.value)
    if (
        removed is not None
        and removed.reason == Reason.BOOTSTRAP_REMOVED
        and (previous is None or previous.reason != Reason.BOOTSTRAP_REMOVED)
    ):
        events.append(EventSpec(EventType.WARNING, Reason.BOOTSTRAP_REMOVED, removed.message))
    return events


def event_object(
    involved: Mapping[str, Any], spec: EventSpec, now_iso: str, instance: str
) -> dict[str, Any]:
    """The core/v1 Event telling `spec` about `involved` (a Bundle or Cluster as served)."""
    meta = involved.get("metadata") or {}
    name, namespace = str(meta.get("name", "")), meta.get("namespace")
    digest = hashlib.sha256(f"{meta.get('uid')}/{spec.reason}/{now_iso}".encode()).hexdigest()
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name[:200]}.{digest[:16]}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": involved.get("apiVersion"),
            "kind": involved.get("kind"),
            "name": name,
            "namespace": namespace,
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": spec.reason.value,
        "message": truncated(spec.message, EVENT_MESSAGE_MAX),
        "type": spec.type.value,
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": instance,
        "action": spec.reason.value,
        "firstTimestamp": now_iso,
        "lastTimestamp": now_iso,
        "count": 1,
    }


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class EventBudget:
    """Which Events may be written now (`admit`); `now` are seconds of a monotonic clock."""

    duplicate_window_s: float = DUPLICATE_WINDOW_S
    per_object_burst: int = PER_OBJECT_BURST
    per_object_refill_s: float = PER_OBJECT_REFILL_S
    global_burst: int = GLOBAL_BURST
    global_per_second: float = GLOBAL_PER_SECOND
    dropped: int = 0
    _seen: OrderedDict[tuple[str, str, str], float] = field(default_factory=OrderedDict)
    _objects: OrderedDict[str, _Bucket] = field(default_factory=OrderedDict)
    _global: _Bucket | None = None

    def admit(self, uid: str, spec: EventSpec, now: float) -> bool:
        """Whether an Event `spec` about the object `uid` may be written at `now` (it is then
        counted); a refused one is counted in `dropped`."""
        key = (uid, spec.reason.value, spec.message)
        last = self._seen.get(key)
        if last is not None and now - last < self.duplicate_window_s:
            self.dropped += 1
            return False
        per_object = self._objects.get(uid) or _Bucket(float(self.per_object_burst), now)
        fleet = self._global or _Bucket(float(self.global_burst), now)
        _refill(per_object, now, 1 / self.per_object_refill_s, self.per_object_burst)
        _refill(fleet, now, self.global_per_second, self.global_burst)
        self._global = fleet
        self._remember(self._objects, uid, per_object)
        if per_object.tokens < 1 or fleet.tokens < 1:
            self.dropped += 1
            return False
        per_object.tokens -= 1
        fleet.tokens -= 1
        self._remember(self._seen, key, now)
        return True

    @staticmethod
    def _remember(memory: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        memory[key] = value
        memory.move_to_end(key)
        while len(memory) > REMEMBERED_MAX:
            memory.popitem(last=False)


def _refill(bucket: _Bucket, now: float, per_second: float, burst: int) -> None:
    bucket.tokens = min(float(burst), bucket.tokens + max(0.0, now - bucket.at) * per_second)
    bucket.at = now
