"""The agent's metrics, read from its caches at scrape: its releases by readiness, when it last
checked in with the management cluster, and whether Flux is installed where it deploys.

One process runs one agent (pull mode) or one per remote-mode Cluster: every series is labelled by
the Cluster (namespace, cluster), never by release, so a scrape stays small on a busy cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bundler.agent.agent import Agent
from bundler.agent.caches import WORKLOADS
from bundler.core.state import ConditionType

RELEASE_STATES = ("ready", "not_ready", "unknown")
CLUSTER_LABELS = ["namespace", "cluster"]


class AgentState(Collector):
    def __init__(self, agents: Callable[[], Iterable[Agent]]) -> None:
        self._agents = agents

    def describe(self) -> Iterable[Metric]:
        return list(self._families([]))

    def collect(self) -> Iterable[Metric]:
        return list(self._families(list(self._agents())))

    def _families(self, agents: list[Agent]) -> Iterable[Metric]:
        releases = GaugeMetricFamily(
            "bundler_agent_releases",
            "HelmReleases this agent wrote, by their Ready condition (ready, not_ready, unknown).",
            labels=[*CLUSTER_LABELS, "state"],
        )
        heartbeat = GaugeMetricFamily(
            "bundler_agent_heartbeat_timestamp_seconds",
            "When the agent last wrote its Cluster's status.agent.lastSeen (Unix time).",
            labels=CLUSTER_LABELS,
        )
        flux = GaugeMetricFamily(
            "bundler_agent_flux_installed",
            "1 when the cluster serves Flux's HelmRelease and source kinds, 0 when not (yet).",
            labels=CLUSTER_LABELS,
        )
        for agent in agents:
            cluster = [agent.config.workspace, agent.config.cluster]
            informers = [agent.caches.downstream[res] for res in WORKLOADS]
            counts = dict.fromkeys(RELEASE_STATES, 0)
            for informer in informers:
                for release in informer.list() if informer.has_synced else []:
                    counts[_release_state(release)] += 1
            for state, count in counts.items():
                releases.add_metric([*cluster, state], count)
            if agent.last_heartbeat is not None:
                heartbeat.add_metric(cluster, agent.last_heartbeat.timestamp())
            installed = all(informer.has_synced for informer in informers)
            flux.add_metric(cluster, 1.0 if installed else 0.0)
        return [releases, heartbeat, flux]


def _release_state(release: dict[str, Any]) -> str:
    for found in (release.get("status") or {}).get("conditions") or []:
        if isinstance(found, dict) and found.get("type") == ConditionType.READY.value:
            return {"True": "ready", "False": "not_ready"}.get(str(found.get("status")), "unknown")
    return "unknown"
