"""A Cluster API fleet for the importer tests: a management store with its manager and importer
running (Fleet), and creating Cluster API objects in it."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bundler.api.resources import CAPI_CLUSTER, CLUSTER, Resource
from bundler.apiserver import ApiServer
from bundler.capi.start import CapiImporter
from bundler.kube.store import KubeStore
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.capi.capi_objects import WS

# Longest a test waits (real seconds) for the importer to catch up; never asserted on.
PATIENCE = 10.0
_POLL = 0.01


# Manual time that passes per poll, so retries with backoff run while a test waits; far below any
# bound a test checks (cleanup waits minutes).
_TICK = 0.05


@dataclass
class Fleet:
    """A running importer and the server it talks to."""

    server: ApiServer
    host: Host
    clock: ManualClock
    importer: CapiImporter | None
    stores: list[KubeStore] = field(default_factory=list)
    _barriers: Iterator[int] = field(default_factory=itertools.count)

    @property
    def store(self) -> MemoryStore:
        return self.server.store

    def eventually(self, check: Callable[[], Any], what: str) -> Any:
        """Poll `check` until it returns something truthy (returned) or PATIENCE runs out."""
        deadline = time.monotonic() + PATIENCE
        while True:
            found = check()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.clock.advance(_TICK)
            time.sleep(_POLL)

    def settle(self) -> None:
        """Wait until the host has nothing to do now (pending timers further out may remain)."""
        self.eventually(lambda: self.host.is_idle(), "the host to settle")

    def barrier(self) -> None:
        """Wait until the host has received and handled every Cluster event so far.

        One watch stream delivers events in order, so once the host's cache holds a Cluster
        created now, every earlier Cluster event has been dispatched; then the host settles.
        The barrier Cluster is registered by hand, so the importer leaves it alone.
        """
        name = f"barrier-{next(self._barriers)}"
        self.store.create(CLUSTER, {"metadata": {"name": name, "namespace": WS}})
        informer = self.host.informer(CLUSTER)
        self.eventually(lambda: informer.get(WS, name), f"the barrier {name}")
        self.settle()

    def find(self, res: Resource, name: str, namespace: str | None = WS) -> Obj | None:
        try:
            return self.store.get(res, name, namespace)
        except NotFound:
            return None

    def wait_for(self, res: Resource, name: str, namespace: str | None = WS) -> Obj:
        found: Obj = self.eventually(lambda: self.find(res, name, namespace), f"{res} {name}")
        return found

    def wait_gone(self, res: Resource, name: str, namespace: str | None = WS) -> None:
        self.eventually(lambda: self.find(res, name, namespace) is None, f"{res} {name} gone")

    def wait_until(self, res: Resource, name: str, check: Callable[[Obj], bool], what: str) -> Obj:
        def holds() -> Obj | None:
            obj = self.find(res, name)
            return obj if obj is not None and check(obj) else None

        found: Obj = self.eventually(holds, what)
        return found


MakeFleet = Callable[..., Fleet]


def create_capi(fleet: Fleet, obj: Obj, res: Resource = CAPI_CLUSTER) -> Obj:
    """Create a CAPI Cluster with its status (a subresource: written after the create)."""
    created = fleet.store.create(res, obj)
    if "status" in obj:
        created = fleet.store.patch_status(
            res, obj["metadata"]["name"], {"status": obj["status"]}, obj["metadata"]["namespace"]
        )
    return created
