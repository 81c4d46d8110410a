"""Continuing a Bundle pass that `maxNew` capped, at the cost of the batch it creates.

A full pass of the bundle controller looks at every targeted cluster. When it stops creating
deployments because it reached `maxNew` (as Fleet, a cap on creations per pass), the echo of each
creation wakes the Bundle again; redoing the full pass for each next batch would make a cold start
quadratic in the fleet size. So a full pass whose clusters are each decided alone (no budget or
partition can hold one back: bundler.core.rollout.decided_alone), that watches no failures and
copies no credentials, leaves what it did not create yet here: the next pass creates the next
batch from it, and re-checks only the clusters whose namespace was not ready.

While a Bundle has deployments left to create, the roll-ups they change wait (the Bundle's own
status, and the Cluster statuses of its workspace: bundler.manager.placements), so a burst of
batches costs one roll-up per object, not one per batch.

Anything else the pass read may have changed in between: the routes invalidate the Bundle (or its
whole workspace) before they wake it, and a pass keeps what it leaves only when nothing was
invalidated since it started reading, so a continuation never acts on a stale plan.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from bundler.api.bundle import RolloutStrategy
from bundler.manager.outcomes import Outcome
from bundler.manager.rows import Row


@dataclass(frozen=True)
class Leftover:
    """What a full pass left for the next: the Bundle (uid, generation) it planned, its outcome,
    the rows still to create in order, the rows whose namespace was not ready, and whether
    something other than these holds the rollout back."""

    started: int
    ident: tuple[str, int]
    outcome: Outcome
    strategy: RolloutStrategy | None
    targets: int
    to_create: tuple[Row, ...]
    unwritable: tuple[Row, ...]
    other_held: bool


class Continuations:
    """The leftovers of capped passes by bundle reference, and what invalidated them when."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tick = 0
        self._left: dict[str, Leftover] = {}
        self._bundle_changed: dict[str, int] = {}
        self._workspace_changed: dict[str, int] = {}
        self._all_changed = 0
        self.rows_looked_at = 0

    def begin(self) -> int:
        """A pass starts reading: the mark its leftover is checked against."""
        with self._lock:
            return self._tick

    def invalidate(self, bundle: str) -> None:
        """Something the Bundle's pass reads changed: its next pass is a full one."""
        with self._lock:
            self._tick += 1
            self._bundle_changed[bundle] = self._tick
            self._left.pop(bundle, None)

    def invalidate_workspace(self, workspace: str) -> None:
        """Something every Bundle of the workspace reads changed (a Cluster, a group)."""
        with self._lock:
            self._tick += 1
            self._workspace_changed[workspace] = self._tick
            for bundle in [b for b in self._left if b.partition("/")[0] == workspace]:
                del self._left[bundle]

    def invalidate_all(self) -> None:
        """Every Bundle is looked at again in full (a resync)."""
        with self._lock:
            self._tick += 1
            self._all_changed = self._tick
            self._left.clear()

    def forget(self, bundle: str) -> None:
        """A Bundle gone: nothing of it is kept."""
        with self._lock:
            self._left.pop(bundle, None)

    def keep(self, bundle: str, leftover: Leftover) -> None:
        """Keep `leftover` unless something it was planned from changed since it started."""
        workspace = bundle.partition("/")[0]
        with self._lock:
            changed = max(
                self._bundle_changed.get(bundle, 0),
                self._workspace_changed.get(workspace, 0),
                self._all_changed,
            )
            if changed > leftover.started:
                return
            self._left[bundle] = leftover

    def take(self, bundle: str) -> Leftover | None:
        with self._lock:
            return self._left.pop(bundle, None)

    def creating(self, bundle: str) -> bool:
        """Whether a capped pass of the Bundle left deployments to create."""
        with self._lock:
            left = self._left.get(bundle)
            return left is not None and bool(left.to_create)

    def creating_in(self, workspace: str) -> bool:
        """Whether some Bundle of the workspace has deployments left to create."""
        with self._lock:
            return any(
                left.to_create
                for bundle, left in self._left.items()
                if bundle.partition("/")[0] == workspace
            )

    def looked_at(self, rows: int) -> None:
        with self._lock:
            self.rows_looked_at += rows
