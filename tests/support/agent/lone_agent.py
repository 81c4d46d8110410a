"""One agent with its own identity against a real API server, outside any AgentWorld (LoneAgent)."""

from __future__ import annotations

from dataclasses import dataclass

from bundler.agent.agent import Agent
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeStore
from bundler.runtime.host import Host


@dataclass
class LoneAgent:
    """A pull agent run against a management server where the admin played the manager."""

    management: ApiServer
    agent: Agent
    host: Host
    stores: list[KubeStore]

    def stop(self) -> None:
        self.host.stop()
        self.agent.caches.stop()
        for store in self.stores:
            store.close()
