"""How a BootstrapConfig change reaches the clusters: a few bootstrap releases at a time.

An upgrade of Flux or the agent (a HelmRelease spec the bootstrap changes) is written only while
fewer than `rolloutStrategy.maxUnavailable` of the workspace's bootstrap releases are not Ready on
their current generation (bundler.core.bootstrap.may_change); the others wait and try again. New
releases (a new cluster) are never held. The generations the manager wrote count until Flux
reports them, so a cache that has not seen a write yet cannot let a second upgrade through; the
decision and the write happen under one lock, so concurrent workers cannot either.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from bundler.api.meta import IntOrPercent
from bundler.core.bootstrap import may_change, ready_condition
from bundler.runtime.informer import Informer
from bundler.store.protocol import Obj

# How long a held upgrade waits before it asks again.
HOLD_RETRY = 5.0


class BootstrapRollout:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (namespace, name) of a release -> the generation the manager last wrote
        self._written: dict[tuple[str, str], int] = {}

    def upgrade(
        self,
        releases: Informer,
        workspace: str,
        max_unavailable: IntOrPercent | None,
        write: Callable[[], Obj | None],
    ) -> bool:
        """Run `write` (an upgrade) if the budget allows; False when it is held."""
        with self._lock:
            present = releases.list(workspace)
            down = sum(1 for release in present if self._unavailable(release))
            if not may_change(down, len(present), max_unavailable):
                return False
            written = write()
            if written is not None:
                meta = written["metadata"]
                self._written[(workspace, meta["name"])] = int(meta.get("generation") or 0)
            return True

    def _unavailable(self, release: Obj) -> bool:
        meta, status = release["metadata"], release.get("status") or {}
        wanted = max(
            int(meta.get("generation") or 0),
            self._written.get((meta.get("namespace") or "", meta["name"]), 0),
        )
        ready = ready_condition(release).get("status") == "True"
        return not (ready and int(status.get("observedGeneration") or 0) >= wanted)
