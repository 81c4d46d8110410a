"""The agent while the management cluster is unreachable: what is deployed stays, and it reports
again once it can."""

from __future__ import annotations

from bundler.api.resources import CLUSTER, HELM_RELEASE
from bundler.store.errors import Unavailable
from bundler.store.memory import MemoryStore
from tests.support.agent.objects import bd_object
from tests.support.agent.world import AGENT_NAMESPACE, WorldFactory
from tests.support.builders import WS
from tests.support.stores import Unreachable


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
