"""Remote mode: one process on the management cluster serves every remote-mode Cluster.

For each Cluster with `spec.agentMode: remote` and a `spec.kubeConfigSecret`, it copies that Secret
(Cluster API's `<cluster>-kubeconfig`, key `value`) from the workspace into the cluster namespace,
where a namespaced HelmRelease can reference it, and runs an Agent whose Flux objects go to the
cluster namespace with `spec.kubeConfig.secretRef`. Flux on the management cluster then deploys
into the downstream cluster, which needs nothing installed. Clusters that leave remote mode, or go
away, have their Agent stopped; the copy goes with the cluster namespace.

The copy is refreshed on every Cluster event and every heartbeat interval, so a rotated kubeconfig
reaches Flux without a restart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.agent.agent import Agent
from bundler.agent.config import DEFAULT_HEARTBEAT_INTERVAL, DEFAULT_RESYNC_PERIOD, AgentConfig
from bundler.agent.ownership import merged, needs_write
from bundler.api.cluster import AgentMode
from bundler.api.resources import CLUSTER, SECRET
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.errors import InvalidInputError, TransientError
from bundler.runtime.controller import Result
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.store.errors import AlreadyExists, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

CONTROLLER_NAME = "remote-agents"


@dataclass(frozen=True)
class RemoteSettings:
    """Which workspaces to serve (empty: all), optionally only the Cluster named `only`, and the
    periods every Agent gets."""

    workspaces: tuple[str, ...] = ()
    only: str | None = None
    heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL
    resync_period: float = DEFAULT_RESYNC_PERIOD

    def __post_init__(self) -> None:
        if self.heartbeat_interval <= 0 or self.resync_period <= 0:
            raise InvalidInputError(
                "heartbeat interval and resync period must be positive", obj="remote agents"
            )


class RemoteAgents:
    def __init__(self, host: Host, store: Store, settings: RemoteSettings | None = None) -> None:
        self.host = host
        self.store = store
        self.settings = settings or RemoteSettings()
        self._agents: dict[Key, Agent] = {}
        self._lock = threading.Lock()
        self._informers: Sequence[Informer] = ()

    def start(self) -> None:
        workspaces: Sequence[str | None] = self.settings.workspaces or (None,)
        self._informers = [self.host.informer(CLUSTER, ws) for ws in workspaces]
        controller = self.host.add_controller(CONTROLLER_NAME, self.reconcile)
        for informer in self._informers:
            controller.watch(informer)

    def stop(self) -> None:
        self.host.remove_controller(CONTROLLER_NAME)
        with self._lock:
            agents, self._agents = list(self._agents.values()), {}
        for agent in agents:
            agent.stop()

    def agents(self) -> dict[Key, Agent]:
        with self._lock:
            return dict(self._agents)

    def reconcile(self, key: Key) -> Result | None:
        cluster = self._cluster(key)
        config = self._config(key, cluster)
        if config is None:
            self._stop_agent(key)
            return None
        self._ensure_agent(key, config)
        self._copy_kubeconfig(config)
        return Result(requeue_after=config.heartbeat_interval)

    def _cluster(self, key: Key) -> Obj | None:
        for informer in self._informers:
            found = informer.get(key.namespace, key.name)
            if found is not None:
                return found
        return None

    def _config(self, key: Key, cluster: Obj | None) -> AgentConfig | None:
        """The Agent this Cluster needs, or None when it is not (or no longer) a remote one."""
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return None
        if self.settings.only is not None and key.name != self.settings.only:
            return None
        spec = cluster.get("spec") or {}
        secret = spec.get("kubeConfigSecret")
        if spec.get("agentMode") != AgentMode.REMOTE.value or not secret:
            return None
        return AgentConfig(
            workspace=key.namespace,
            cluster=key.name,
            mode=AgentMode.REMOTE,
            kubeconfig_secret=secret,
            heartbeat_interval=self.settings.heartbeat_interval,
            resync_period=self.settings.resync_period,
        )

    def _ensure_agent(self, key: Key, config: AgentConfig) -> None:
        with self._lock:
            running = self._agents.get(key)
        if running is not None and running.config == config:
            return
        if running is not None:
            self._stop_agent(key)
        agent = Agent(self.host, self.store, self.store, config)
        with self._lock:
            self._agents[key] = agent
        agent.start()
        log.info("remote agent for cluster %s started", config.ref)

    def _stop_agent(self, key: Key) -> None:
        with self._lock:
            agent = self._agents.pop(key, None)
        if agent is not None:
            agent.stop()
            log.info("remote agent for cluster %s stopped", agent.config.ref)

    def _copy_kubeconfig(self, config: AgentConfig) -> None:
        name = config.kubeconfig_secret or ""
        try:
            source = self.store.get(SECRET, name, config.workspace)
        except NotFound:
            raise TransientError(
                "the kubeconfig Secret does not exist (yet)",
                obj=f"Secret {config.workspace}/{name}",
                field="Cluster spec.kubeConfigSecret",
            ) from None
        desired = _kubeconfig_copy(config, source)
        try:
            live = self.store.get(SECRET, name, config.cluster_namespace)
        except NotFound:
            try:
                self.store.create(SECRET, desired)
                return
            except AlreadyExists:
                live = self.store.get(SECRET, name, config.cluster_namespace)
        if needs_write(desired, live):
            self.store.update(SECRET, merged(desired, live))


def _kubeconfig_copy(config: AgentConfig, source: Obj) -> Obj:
    return {
        "apiVersion": SECRET.api_version,
        "kind": SECRET.kind,
        "metadata": {
            "name": config.kubeconfig_secret,
            "namespace": config.cluster_namespace,
            "labels": config.owned_labels(),
            "annotations": {ANNOTATION_CLUSTER: config.ref},
        },
        "type": source.get("type") or "Opaque",
        "data": dict(source.get("data") or {}),
    }
