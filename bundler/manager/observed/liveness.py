"""Whether a Cluster's agent is offline, when that will change, and who must hear when it does.

An agent is offline when its last check-in (`status.agent.lastSeen`) is older than `offline_after`.
An agent that never checked in is measured from the Cluster's creation instead, so a new Cluster
gets the same grace period before its deployments read Offline. The verdict depends on time, so the
cluster status controller asks `seconds_until_offline` to come back exactly when it flips, and
`record` tells it whether the verdict changed since it last looked (then the bundles and groups
that show the cluster must be recomputed).
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from bundler.api.cluster import Cluster
from bundler.core.state import is_offline
from bundler.runtime.clock import Clock


class Liveness:
    def __init__(self, clock: Clock, offline_after: float) -> None:
        self._clock = clock
        self._threshold = timedelta(seconds=offline_after)
        self._lock = threading.Lock()
        self._verdicts: dict[str, bool] = {}

    def offline(self, cluster: Cluster, last_seen: str | None) -> bool:
        reference = last_seen or cluster.metadata.creationTimestamp
        return is_offline(reference, self._clock.now(), self._threshold)

    def seconds_until_offline(self, cluster: Cluster, last_seen: str | None) -> float | None:
        """Clock seconds until the agent turns offline without checking in; None if it is."""
        reference = last_seen or cluster.metadata.creationTimestamp
        if reference is None or self.offline(cluster, last_seen):
            return None
        try:
            seen = datetime.fromisoformat(reference)
        except ValueError:
            return None
        now = self._clock.now()
        if seen.tzinfo is None:
            seen = seen.replace(tzinfo=now.tzinfo)
        # is_offline is strict (older than the threshold): come back just past the edge.
        return max(0.0, (seen + self._threshold - now).total_seconds()) + 1.0

    def record(self, cluster: str, offline: bool) -> bool:
        """Remember the verdict; True when it differs from a verdict recorded before."""
        with self._lock:
            before = self._verdicts.get(cluster)
            self._verdicts[cluster] = offline
        return before is not None and before != offline

    def forget(self, cluster: str) -> None:
        with self._lock:
            self._verdicts.pop(cluster, None)
