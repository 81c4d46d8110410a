"""The agent while the management cluster is unreachable: what is deployed stays, and it reports
again once it can."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.api.resources import CLUSTER, HELM_RELEASE, Resource
from bundler.store.errors import Unavailable
from bundler.store.memory import MemoryStore
from bundler.store.protocol import ErrorHandler, EventHandler, Obj, ObjectList, Watch
from tests.agent.conftest import AGENT_NAMESPACE, WorldFactory
from tests.agent.objects import bd_object
from tests.builders import WS


class Unreachable:
    """The management store as the agent sees it over the network: every call fails while down."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.down = False
        self.calls_while_down = 0

    def _check(self) -> None:
        if self.down:
            self.calls_while_down += 1
            raise Unavailable("connection refused", obj="management cluster")

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        self._check()
        return self.store.get(res, name, namespace)

    def list(
        self, res: Resource, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> ObjectList:
        self._check()
        return self.store.list(res, namespace, labels)

    def create(self, res: Resource, obj: Obj) -> Obj:
        self._check()
        return self.store.create(res, obj)

    def update(self, res: Resource, obj: Obj) -> Obj:
        self._check()
        return self.store.update(res, obj)

    def update_status(self, res: Resource, obj: Obj) -> Obj:
        self._check()
        return self.store.update_status(res, obj)

    def patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        self._check()
        return self.store.patch(res, name, patch, namespace)

    def patch_status(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> Obj:
        self._check()
        return self.store.patch_status(res, name, patch, namespace)

    def delete(self, res: Resource, name: str, namespace: str | None = None) -> None:
        self._check()
        self.store.delete(res, name, namespace)

    def watch(
        self,
        res: Resource,
        on_event: EventHandler,
        *,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
        resource_version: str | None = None,
        on_error: ErrorHandler | None = None,
    ) -> Watch:
        self._check()
        return self.store.watch(
            res,
            on_event,
            namespace=namespace,
            labels=labels,
            resource_version=resource_version,
            on_error=on_error,
        )


def test_outage_keeps_what_is_deployed_and_reports_afterwards(make_world: WorldFactory) -> None:
    memory = MemoryStore()
    link = Unreachable(memory)
    world = make_world(memory=memory, management=link)
    memory.create(CLUSTER, {"metadata": {"name": "c1", "namespace": WS}})
    world.start()
    world.put_bd(bd_object())
    assert world.bd()["status"]["ready"] is True

    link.down = True
    memory.fail_watches(Unavailable("connection reset", obj="watch"))
    # Someone deletes the HelmRelease meanwhile: the agent restores it from what it knows.
    world.downstream.delete(HELM_RELEASE, "app", AGENT_NAMESPACE)
    world.advance(300)
    assert link.calls_while_down > 0
    assert world.downstream_objects() == [("HelmRelease", "app"), ("HelmRepository", "app")]
    assert world.flux is not None and ("app", "app") in world.flux.releases()

    link.down = False
    world.advance(300)
    agent = memory.get(CLUSTER, "c1", WS)["status"]["agent"]
    assert agent["lastSeen"] >= "2024-01-01T00:05:00Z"
    status = world.bd()["status"]
    assert status["ready"] is True
    assert status["release"]["revision"] == 1
