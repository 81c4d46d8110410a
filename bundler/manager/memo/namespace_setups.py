"""Clusters whose namespace the cluster controller is about to create: Bundle passes wait for it.

A Bundle pass that runs before a targeted cluster's namespace exists cannot write there: it leaves
the row for a later pass, and the roll-ups it wakes show the cluster pending, to be corrected once
the namespace comes (a status write per Bundle and Cluster more, and a conflict with the cluster
controller's finalizer update). So while a Cluster of the workspace waits for its namespace, the
workspace's Bundle passes are deferred (bundler.manager.work), and their roll-ups with them
(bundler.manager.memo.placements.awaiting_plans).

A Cluster waits from when it is seen without a ready namespace until the namespace shows ready in
the cache, or until a cluster controller pass ends without having written it (an invalid name, a
terminating namespace, an error): never longer than one cluster controller pass and its echo.
"""

from __future__ import annotations

import threading

from bundler.manager.work import Stage, Work
from bundler.runtime.key import Key

_SETUPS_IN = "setups-in:{}"


class Setups:
    """The Clusters waiting for their namespace, by workspace."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[str]] = {}

    def expect(self, cluster: Key) -> None:
        """The cluster controller will create this Cluster's namespace."""
        with self._lock:
            self._waiting.setdefault(cluster.namespace, set()).add(cluster.name)

    def done(self, work: Work, cluster: Key) -> None:
        """The Cluster no longer waits; the passes deferred on its workspace run when none does."""
        with self._lock:
            waiting = self._waiting.get(cluster.namespace, set())
            waiting.discard(cluster.name)
            if waiting:
                return
            self._waiting.pop(cluster.namespace, None)
        work.release(_SETUPS_IN.format(cluster.namespace))

    def waiting_in(self, workspace: str) -> bool:
        with self._lock:
            return bool(self._waiting.get(workspace))

    def awaiting(self, work: Work, stage: Stage, key: Key) -> bool:
        """Whether a Cluster of `key`'s workspace waits for its namespace; if so `key` is run
        again once none does."""
        if not self.waiting_in(key.namespace):
            return False
        work.defer((_SETUPS_IN.format(key.namespace),), stage, key)
        # The last one may have come between the check and the deferral: look again.
        return self.waiting_in(key.namespace)
