"""Which clusters of a workspace changed, in order, so a ClusterGroup's roll-up looks at those only.

Whatever wakes a group's status for one cluster's sake (an event of the Cluster, of one of its
deployments, a change of its liveness) records that cluster here before it wakes the group. Each
group's roll-up remembers the last change number it took in (bundler.manager.memo.group_members)
and asks for the clusters recorded after it: one label change costs its groups that one cluster,
not a walk over the workspace. A workspace's log holds each cluster once, at its latest change,
and forgets what every group has taken in; past MAX_CHANGES clusters (a workspace without groups
never has its log read) it forgets its oldest, and a reader that had not taken that one in is
told to walk the workspace instead.
"""

from __future__ import annotations

import threading

MAX_CHANGES = 1 << 16


class ClusterChanges:
    def __init__(self, max_changes: int = MAX_CHANGES) -> None:
        self._lock = threading.Lock()
        self._max_changes = max_changes
        self._last = 0
        # Per workspace: cluster ref -> its latest change number, oldest first.
        self._log: dict[str, dict[str, int]] = {}
        # Per workspace: the number of the latest change forgotten before every reader saw it.
        self._floor: dict[str, int] = {}

    def record(self, workspace: str, cluster_ref: str) -> None:
        with self._lock:
            self._last += 1
            log = self._log.setdefault(workspace, {})
            log.pop(cluster_ref, None)
            log[cluster_ref] = self._last
            if len(log) > self._max_changes:
                self._floor[workspace] = log.pop(next(iter(log)))

    def latest(self) -> int:
        """The number of the latest change, of any workspace."""
        with self._lock:
            return self._last

    def since(self, workspace: str, seen: int) -> tuple[list[str], int] | None:
        """The clusters of `workspace` changed after change number `seen`, newest first, and the
        number to remember as seen; None when some of them were forgotten (walk the workspace)."""
        with self._lock:
            if seen < self._floor.get(workspace, 0):
                return None
            found = []
            for cluster_ref, number in reversed(self._log.get(workspace, {}).items()):
                if number <= seen:
                    break
                found.append(cluster_ref)
            return found, self._last

    def forget_through(self, workspace: str, seen: int) -> None:
        """Drop the changes up to number `seen`: every reader of the workspace has taken them in."""
        with self._lock:
            log = self._log.get(workspace)
            if not log:
                return
            stale = []
            for cluster_ref, number in log.items():
                if number > seen:
                    break
                stale.append(cluster_ref)
            for cluster_ref in stale:
                del log[cluster_ref]
