"""Which BundleDeployments are settled: their last reconcile changed nothing, and nothing it read
has changed since, so reconciling them again would change nothing again.

A reconcile reads, from the agent's caches, the BundleDeployment, the BundleDeployments of the
bundles it depends on, and the downstream objects written for it or named like its workload object
(bundler.core.delivery: the HelmRelease, for Helm);
what it decides, writes and reports follows from those (the clock only stamps conditions that
change). When it writes nothing and fails on nothing, the resourceVersions of what it read are
remembered, as they were before it read them (a change during the pass is a difference next time).
Reconciling a settled BundleDeployment again (a resync) costs a few lookups: an event missed and
caught by a relist, drift, a dependency getting Ready, each changes a resourceVersion and brings
the full pass back. Reads outside the caches (the registry credentials Secret on the management
cluster, a remote agent's valuesFrom objects downstream) carry no resourceVersion here: a
BundleDeployment that needs them never settles, and every reconcile of it is a full pass.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from bundler.agent.caches import AgentCaches, Cached
from bundler.api.resources import Resource

# (what, name, resourceVersion) of every object a reconcile read, in the order read.
Seen = tuple[tuple[str, str, str | None], ...]


@dataclass(frozen=True)
class Reads:
    """What one reconcile of a BundleDeployment reads, named: its name and resourceVersion, the
    bundles it depends on, and the kind and name of its workload object."""

    name: str
    version: str | None
    dependencies: tuple[str, ...]
    workload: Resource
    release: str


class SettledDeployments:
    def __init__(self, caches: AgentCaches) -> None:
        self.caches = caches
        self._lock = threading.Lock()
        self._settled: dict[str, tuple[Reads, Seen]] = {}

    def look(self, reads: Reads) -> Seen:
        """The resourceVersions of what `reads` names, as the caches hold them now."""
        seen: list[tuple[str, str, str | None]] = []
        for bundle in reads.dependencies:
            seen.append(("dependency", bundle, None))
            seen.extend(("dependency", *_version(bd)) for bd in self.caches.deployments_of(bundle))
        seen.extend((res.plural, *_version(obj)) for res, obj in self.caches.owned_by(reads.name))
        release = self.caches.live(reads.workload, reads.release)
        seen.append(("release", reads.release, None if release is None else _version(release)[1]))
        return tuple(seen)

    def holds(self, observed: Cached) -> bool:
        """Whether `observed` is settled: remembered at its resourceVersion, and nothing that
        reconcile read has changed since."""
        meta = observed["metadata"]
        with self._lock:
            known = self._settled.get(meta["name"])
        if known is None or known[0].version != meta.get("resourceVersion"):
            return False
        return self.look(known[0]) == known[1]

    def remember(self, reads: Reads, seen: Seen) -> None:
        """`reads` changed nothing; `seen` is what `look` found before the reconcile read it."""
        with self._lock:
            self._settled[reads.name] = (reads, seen)

    def forget(self, name: str) -> None:
        with self._lock:
            self._settled.pop(name, None)

    def forget_all(self) -> None:
        with self._lock:
            self._settled.clear()


def _version(obj: Cached) -> tuple[str, str | None]:
    meta = obj.get("metadata") or {}
    return str(meta.get("name")), meta.get("resourceVersion")
