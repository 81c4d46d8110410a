"""The last planning outcome of each Bundle, shared by the controllers that roll status up.

The bundle controller decides which clusters a Bundle targets and which of them failed to render;
the status controllers read that here instead of planning again. Replacing an outcome reports the
clusters whose placement changed, so exactly their status is recomputed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from bundler.api.bundle import RolloutStatus
from bundler.api.images import ResolvedImage
from bundler.api.schedule import ScheduleStatus
from bundler.core.rollout_gates import Gate
from bundler.core.summary import Gated


@dataclass(frozen=True)
class Rejection:
    """A Ready=False reason and message: why a whole Bundle was not planned, or what keeps some
    of its clusters from their deployment."""

    reason: str
    message: str


@dataclass(frozen=True)
class ImagesOutcome:
    """`resolved`: status.resolvedImages; `failed`: why ImagesResolved is False, if it is."""

    resolved: tuple[ResolvedImage, ...] = ()
    failed: Rejection | None = None


@dataclass(frozen=True)
class Outcome:
    """What one pass of the bundle controller decided for a Bundle generation.

    `targeted` is None when the Bundle was rejected: which clusters it targets is then unknown and
    its existing BundleDeployments are left as they are. `held` is True while the rollout strategy
    holds some cluster back, so deployment status changes must wake the bundle controller.
    `blocked` says why some clusters (those with an entry in `errors`) cannot get their deployment
    while the others proceed; it is the Bundle's Ready condition. `missing` tells the clusterGroups
    and dependsOn that name nothing in the workspace (the Bundle's References condition).
    `kept` are clusters no longer targeted whose deployments the deletion guard keeps, and
    `deletion_held` says why (the Bundle's Ready condition while it holds). `halted` says why a
    failing rollout halted or rolled back (bundler.manager.controllers.rollout_memory). `images` is
    what the Bundle says of its images (None: it has none;
    bundler.manager.controllers.image_status). `paused` is the Bundle's spec.paused (its placements
    say Paused). With rollout gates (bundler.manager.controllers.rollout_gates), `rollout` is where
    each partition stands, `gate` the gate the rollout waits at, `holds` why each cluster held at a
    gate waits, and `schedule` what the Bundle's own schedule allows.
    """

    generation: int
    targeted: frozenset[str] | None
    errors: Mapping[str, str] = field(default_factory=dict)
    rejection: Rejection | None = None
    blocked: Rejection | None = None
    resolved_version: str | None = None
    held: bool = False
    missing: tuple[str, ...] = ()
    kept: frozenset[str] = frozenset()
    deletion_held: Rejection | None = None
    halted: Rejection | None = None
    images: ImagesOutcome | None = None
    paused: bool = False
    rollout: RolloutStatus | None = None
    gate: Gate | None = None
    holds: Mapping[str, Gated] = field(default_factory=dict)
    schedule: ScheduleStatus | None = None

    def keeps(self, cluster: str) -> bool:
        """Whether this plan keeps a deployment on `cluster` (a rejected one keeps every one)."""
        return self.targeted is None or cluster in self.targeted or cluster in self.kept

    def placement(self, cluster: str) -> tuple[bool, str | None, bool, Gated | None]:
        """Whether `cluster` is targeted, its error, whether the Bundle is paused, and why a
        gate holds it."""
        targeted = self.targeted is not None and cluster in self.targeted
        return targeted, self.errors.get(cluster), self.paused, self.holds.get(cluster)


@dataclass(frozen=True)
class Recorded:
    differs: bool
    clusters: set[str]


class Outcomes:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_bundle: dict[str, Outcome] = {}

    def get(self, bundle: str) -> Outcome | None:
        with self._lock:
            return self._by_bundle.get(bundle)

    def record(self, bundle: str, outcome: Outcome) -> Recorded:
        """Record `outcome`: did it differ, and whose placement of this bundle changed."""
        with self._lock:
            old = self._by_bundle.get(bundle)
            self._by_bundle[bundle] = outcome
        return Recorded(old != outcome, _changed(old, outcome))

    def forget(self, bundle: str) -> set[str]:
        """Drop a deleted bundle; returns the clusters it was placed on."""
        with self._lock:
            old = self._by_bundle.pop(bundle, None)
        return _changed(old, None)


def _changed(old: Outcome | None, new: Outcome | None) -> set[str]:
    before = (old.targeted if old else None) or frozenset()
    after = (new.targeted if new else None) or frozenset()
    if (old is None or old.targeted is None) != (new is None or new.targeted is None):
        # Switching between planned and rejected changes how every placement is derived.
        return set(before | after)
    return {
        cluster
        for cluster in before | after
        if (old.placement(cluster) if old else None) != (new.placement(cluster) if new else None)
    }
