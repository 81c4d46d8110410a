"""Continuing a Bundle pass that `maxNew` capped, at the cost of the batch it creates.

A full pass of the bundle controller looks at every targeted cluster. When it stops creating
deployments because it reached `maxNew` (as Fleet, a cap on creations per pass), the echo of each
creation wakes the Bundle again; redoing the full pass for each next batch would make a cold start
quadratic in the fleet size. So a full pass whose clusters are each decided alone (no budget or
partition can hold one back: bundler.core.rollout.decided_alone), that watches no failures,
copies no credentials and resolves nothing (a version range or an image is polled by full passes),
leaves what it did not create yet here: the next pass creates the next
batch from it, and re-checks only the clusters whose namespace was not ready.

While a Bundle's pass creates deployments, or it has some left to create, the roll-ups they change
wait (the Bundle's own status, and the Cluster statuses of its workspace:
bundler.manager.memo.placements), so a burst of batches costs one roll-up per object, not one per
batch.

Anything else the pass read may have changed in between: the routes invalidate the Bundle (or its
whole workspace) before they wake it, and a pass keeps what it leaves only when nothing was
invalidated since it started reading, so a continuation never acts on a stale plan.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bundler.api.bundle import RolloutStrategy
from bundler.manager.memo.outcomes import Outcome
from bundler.manager.memo.rows import Row


@dataclass(frozen=True)
class Leftover:
    """What a full pass left for the next: the Bundle (uid, generation) it planned, its outcome,
    every targeted cluster's row, the clusters still to create (in order), those whose namespace
    was not ready, those something other than maxNew holds back, how many clusters the rollout
    counted, and the clusters that changed since (their rows are planned again)."""

    started: int
    ident: tuple[str, int]
    outcome: Outcome
    strategy: RolloutStrategy | None
    rows: Mapping[str, Row]
    to_create: tuple[str, ...]
    unwritable: frozenset[str]
    held: frozenset[str]
    targets: int
    changed: frozenset[str] = frozenset()


# Cluster changes remembered per workspace for the passes running while they happen; a pass
# that started before the oldest one remembered keeps nothing.
CLUSTER_LOG = 1024


class Continuations:
    """The leftovers of capped passes by bundle reference, and what invalidated them when."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tick = 0
        self._left: dict[str, Leftover] = {}
        self._bundle_changed: dict[str, int] = {}
        self._workspace_changed: dict[str, int] = {}
        self._all_changed = 0
        self._cluster_changes: dict[str, deque[tuple[int, str]]] = {}
        # Clusters changed since each leftover was kept (merged into it when it is taken).
        self._changed: dict[str, set[str]] = {}
        self.rows_looked_at = 0
        # Bundles whose running pass creates deployments (until it ends).
        self._creating_now: set[str] = set()

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
            self._changed.pop(bundle, None)

    def invalidate_workspace(self, workspace: str) -> None:
        """Something every Bundle of the workspace reads changed (a Cluster, a group)."""
        with self._lock:
            self._tick += 1
            self._workspace_changed[workspace] = self._tick
            for bundle in [b for b in self._left if b.partition("/")[0] == workspace]:
                del self._left[bundle]
                self._changed.pop(bundle, None)

    def cluster_changed(self, workspace: str, cluster: str) -> None:
        """A Cluster's labels, annotations or spec changed (or it came or went): every Bundle of
        the workspace plans that cluster's row again, and only it."""
        with self._lock:
            self._tick += 1
            log = self._cluster_changes.setdefault(workspace, deque(maxlen=CLUSTER_LOG))
            log.append((self._tick, cluster))
            for bundle in self._left:
                if bundle.partition("/")[0] == workspace:
                    self._changed.setdefault(bundle, set()).add(cluster)

    def invalidate_all(self) -> None:
        """Every Bundle is looked at again in full (a resync)."""
        with self._lock:
            self._tick += 1
            self._all_changed = self._tick
            self._left.clear()
            self._changed.clear()

    def forget(self, bundle: str) -> None:
        """A Bundle gone: nothing of it is kept."""
        with self._lock:
            self._left.pop(bundle, None)
            self._changed.pop(bundle, None)

    def keep(self, bundle: str, leftover: Leftover) -> None:
        """Keep `leftover` unless something it was planned from changed since it started."""
        workspace = bundle.partition("/")[0]
        with self._lock:
            changed = max(
                self._bundle_changed.get(bundle, 0),
                self._workspace_changed.get(workspace, 0),
                self._all_changed,
            )
            log = self._cluster_changes.get(workspace, deque())
            if changed > leftover.started or (
                len(log) == CLUSTER_LOG and log[0][0] > leftover.started
            ):
                return
            since = set()
            for tick, cluster in reversed(log):  # newest first: stop at the pass's start
                if tick <= leftover.started:
                    break
                since.add(cluster)
            self._left[bundle] = leftover
            self._changed[bundle] = since

    def take(self, bundle: str) -> Leftover | None:
        with self._lock:
            left = self._left.pop(bundle, None)
            changed = self._changed.pop(bundle, set())
        return None if left is None else replace(left, changed=left.changed | changed)

    def creating_now(self, bundle: str) -> None:
        """The Bundle's running pass is about to create deployments."""
        with self._lock:
            self._creating_now.add(bundle)

    def pass_ended(self, bundle: str) -> None:
        with self._lock:
            self._creating_now.discard(bundle)

    def creating(self, bundle: str) -> bool:
        """Whether the Bundle's running pass creates deployments, or a capped pass left some."""
        with self._lock:
            left = self._left.get(bundle)
            return bundle in self._creating_now or (left is not None and bool(left.to_create))

    def creating_in(self, workspace: str) -> bool:
        """Whether some Bundle of the workspace creates deployments now or has some left."""
        with self._lock:
            return any(b.partition("/")[0] == workspace for b in self._creating_now) or any(
                left.to_create
                for bundle, left in self._left.items()
                if bundle.partition("/")[0] == workspace
            )

    def looked_at(self, rows: int) -> None:
        with self._lock:
            self.rows_looked_at += rows
