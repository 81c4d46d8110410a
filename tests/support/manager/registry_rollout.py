"""A rollout of a registry chart over a few clusters (Rollout) and whether a BundleDeployment counts
as unavailable."""

from __future__ import annotations

import threading
from collections.abc import Callable

from bundler.store.protocol import Obj, WatchEvent


class Rollout:
    """Watches BundleDeployments: how many were unavailable at once while taking `version`,
    whether the rollout strategy ever held one back (staged), whether one that had applied
    `version` was reported not Ready (its agent waited for Flux to release it), and whether one
    was reported Ready while Flux's newest release was still of another version. `taken` reads
    what a deployment's options take (default: the chart version; an image test reads a value)."""

    def __init__(self, version: str, taken: Callable[[Obj | None], str | None] | None = None):
        self.version = version
        self._taken = taken or chart_version
        self.latest: dict[str, Obj] = {}
        self.most_unavailable = 0
        self.staged = False
        self.waited_for_release = False
        self.ready_before_released = False
        self._lock = threading.Lock()

    def on_event(self, event: WatchEvent) -> None:
        meta = event.object["metadata"]
        with self._lock:
            self.latest[meta["name"] + "@" + meta["namespace"]] = event.object
            specs = [bd["spec"] for bd in self.latest.values()]
            if any(self._taken(s.get("stagedOptions")) == self.version for s in specs):
                self.staged = True
            taking = [
                bd
                for bd in self.latest.values()
                if self._taken(bd["spec"]["options"]) == self.version
            ]
            applied = [bd["status"] for bd in taking if _applied(bd)]
            if any(not status.get("ready") for status in applied):
                self.waited_for_release = True
            if any(status.get("ready") and _released(status) != self.version for status in applied):
                self.ready_before_released = True
            if taking:
                unavailable = sum(1 for bd in self.latest.values() if is_unavailable(bd))
                self.most_unavailable = max(self.most_unavailable, unavailable)


def chart_version(options: Obj | None) -> str | None:
    return None if options is None else options["helm"]["version"]


def _applied(bd: Obj) -> bool:
    status = bd.get("status") or {}
    return bool(status.get("appliedDeploymentID") == bd["spec"]["deploymentID"])


def _released(status: Obj) -> str | None:
    """The chart version of Flux's newest release, as the agent copied it."""
    release = status.get("release") or {}
    version: str | None = release.get("chartVersion")
    return version


def is_unavailable(bd: Obj) -> bool:
    return not _applied(bd) or not (bd.get("status") or {}).get("ready")
