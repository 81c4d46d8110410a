"""Remote mode: one process on the management cluster serves every remote-mode Cluster.

For each Cluster with `spec.agentMode: remote` and a `spec.kubeConfigSecret`, it copies that Secret
(Cluster API's `<cluster>-kubeconfig`, key `value`) from the workspace into the cluster namespace,
where a namespaced HelmRelease can reference it, and runs an Agent whose Flux objects go to the
cluster namespace with `spec.kubeConfig.secretRef`. Flux on the management cluster then deploys
into the downstream cluster, which needs nothing installed. Clusters that leave remote mode, or go
away, have their Agent stopped.

A Cluster coming from pull mode gets its Agent (and its kubeconfig copy) only once its pull agent
let go of its releases (bundler.core.handover), so no two controllers ever manage a release, and
only once the manager found the pull agent's identity gone from the cluster namespace (its
annotation on the Cluster, for the Cluster's current generation), so no pull agent token can ever
read the copy; every copy and refresh waits for that. Until then the Cluster's
status.agent.handoverPending says why, and how to force it. The Agent's
HelmReleases name the same releases in the same storage namespaces, so Flux adopts them.

A Cluster that leaves remote mode (to pull mode, say) hands its releases over without uninstalling
them: its HelmReleases are suspended, then deleted (Flux leaves the release of a suspended
HelmRelease installed), and its chart sources deleted; the pull agent's HelmRelease has the same
release name and storage namespace, so its Flux adopts the release by upgrading it. Then the copy -
the downstream cluster's credentials, which a pull agent in that namespace must never read - is
deleted. Both are found by bundler's labels in the cluster namespace computed from the Cluster's
key, never from a field anyone can write. A Cluster that goes away takes all of it with its cluster
namespace. Each Cluster not in remote mode is checked once per process, and again after every copy
made for it.

The copy is refreshed on every Cluster event and every heartbeat interval, so a rotated kubeconfig
reaches Flux without a restart.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.agent.agent import Agent
from bundler.agent.caches import FLUX_KINDS, WORKLOADS
from bundler.agent.config import DEFAULT_HEARTBEAT_INTERVAL, DEFAULT_RESYNC_PERIOD, AgentConfig
from bundler.agent.ownership import merged, needs_write
from bundler.agent.remote_values import DownstreamValues, StoreOpener
from bundler.api.cluster import AgentMode
from bundler.api.resources import CLUSTER, SECRET, Resource
from bundler.core.flux import DEFAULT_AGENT_NAMESPACE
from bundler.core.handover import (
    KUBECONFIG_COPY_MARK,
    LABEL_KUBECONFIG_COPY,
    HandoverStep,
    pull_identity_removed,
    remote_gate,
)
from bundler.core.labels import ANNOTATION_CLUSTER
from bundler.errors import InvalidInputError, TransientError
from bundler.runtime.controller import Result
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.store.errors import AlreadyExists, KindNotServed, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

CONTROLLER_NAME = "remote-agents"


@dataclass(frozen=True)
class RemoteSettings:
    """Which workspaces to serve (empty: all), optionally only the Cluster named `only`, the
    periods every Agent gets, and the namespace on each downstream cluster valuesFrom objects are
    read from (the pull agent's)."""

    workspaces: tuple[str, ...] = ()
    only: str | None = None
    agent_namespace: str = DEFAULT_AGENT_NAMESPACE
    heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL
    resync_period: float = DEFAULT_RESYNC_PERIOD

    def __post_init__(self) -> None:
        if self.heartbeat_interval <= 0 or self.resync_period <= 0:
            raise InvalidInputError(
                "heartbeat interval and resync period must be positive", obj="remote agents"
            )


class RemoteAgents:
    def __init__(
        self,
        host: Host,
        store: Store,
        settings: RemoteSettings | None = None,
        opener: StoreOpener | None = None,
    ) -> None:
        """`opener` reaches a downstream cluster through its kubeconfig, for valuesFrom objects
        (None: Bundles with valuesFrom cannot be deployed in remote mode from here)."""
        self.host = host
        self.store = store
        self.settings = settings or RemoteSettings()
        self.opener = opener
        self._agents: dict[Key, Agent] = {}
        # Clusters not in remote mode whose cluster namespace holds no kubeconfig copy and no
        # remote agent workload object (HelmRelease) any more.
        self._without_copy: set[Key] = set()
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
            if cluster is not None and self._serves(key) and not _deleting(cluster):
                self._leave_remote_mode(key)
            return None
        if key not in self.agents() and not self._may_adopt(key, cluster or {}):
            # Woken by the pull agent's heartbeat on the Cluster; the requeue only refreshes the
            # message.
            return Result(requeue_after=config.heartbeat_interval)
        self._ensure_agent(key, config)
        with self._lock:
            self._without_copy.discard(key)
        if cluster is not None and pull_identity_removed(cluster):
            # A running Agent keeps the copy it has while the manager stamps a new generation.
            self._copy_kubeconfig(config)
        return Result(requeue_after=config.heartbeat_interval)

    def _may_adopt(self, key: Key, cluster: Obj) -> bool:
        """Whether the pull side let go of the Cluster's releases (or never held them); says on
        the Cluster's status.agent.handoverPending why not."""
        gate = remote_gate(cluster)
        waiting = gate.message if gate.step is HandoverStep.WAIT else None
        agent = (cluster.get("status") or {}).get("agent") or {}
        if agent.get("handoverPending") != waiting:
            patch = {"status": {"agent": {"handoverPending": waiting}}}
            with contextlib.suppress(NotFound):
                self.store.patch_status(CLUSTER, key.name, patch, key.namespace)
        if waiting is not None:
            log.info("remote agents: cluster %s/%s: %s", key.namespace, key.name, waiting)
        return waiting is None

    def _serves(self, key: Key) -> bool:
        return self.settings.only is None or key.name == self.settings.only

    def _leave_remote_mode(self, key: Key) -> None:
        with self._lock:
            if key in self._without_copy:
                return
        # The cluster namespace and bundler's labels, which do not depend on the mode.
        config = AgentConfig(workspace=key.namespace, cluster=key.name)
        self._hand_over_releases(config)
        self._remove_kubeconfig_copy(config.cluster_namespace)
        with self._lock:
            self._without_copy.add(key)

    def _hand_over_releases(self, config: AgentConfig) -> None:
        """Suspend and delete the remote agent's workload objects (leaving the releases
        installed), then their sources."""
        namespace, owned = config.cluster_namespace, config.owned_labels()
        for workload in WORKLOADS:
            for release in self._listed(workload, namespace, owned):
                name = release["metadata"]["name"]
                with contextlib.suppress(NotFound):
                    if not (release.get("spec") or {}).get("suspend"):
                        self.store.patch(workload, name, {"spec": {"suspend": True}}, namespace)
                    self.store.delete(workload, name, namespace)
                log.info(
                    "remote agents: handed over the release of %s %s/%s",
                    workload.kind, namespace, name,
                )  # fmt: skip
        for res in (kind for kind in FLUX_KINDS if kind not in WORKLOADS):
            for source in self._listed(res, namespace, owned):
                with contextlib.suppress(NotFound):
                    self.store.delete(res, source["metadata"]["name"], namespace)

    def _listed(self, res: Resource, namespace: str, owned: dict[str, str]) -> list[Obj]:
        """The objects of `res` the agent wrote; none when the cluster does not serve the kind
        (a delivery whose controller is not installed there)."""
        try:
            return self.store.list(res, namespace=namespace, labels=owned).items
        except KindNotServed:
            return []

    def _remove_kubeconfig_copy(self, namespace: str) -> None:
        marked = {LABEL_KUBECONFIG_COPY: KUBECONFIG_COPY_MARK}
        for copy in self.store.list(SECRET, namespace=namespace, labels=marked).items:
            with contextlib.suppress(NotFound):
                self.store.delete(SECRET, copy["metadata"]["name"], namespace)
            log.info(
                "remote agents: removed the kubeconfig copy %s/%s",
                namespace,
                copy["metadata"]["name"],
            )

    def _cluster(self, key: Key) -> Obj | None:
        for informer in self._informers:
            found = informer.get(key.namespace, key.name)
            if found is not None:
                return found
        return None

    def _config(self, key: Key, cluster: Obj | None) -> AgentConfig | None:
        """The Agent this Cluster needs, or None when it is not (or no longer) a remote one."""
        if cluster is None or _deleting(cluster) or not self._serves(key):
            return None
        spec = cluster.get("spec") or {}
        secret = spec.get("kubeConfigSecret")
        if spec.get("agentMode") != AgentMode.REMOTE.value or not secret:
            return None
        return AgentConfig(
            workspace=key.namespace,
            cluster=key.name,
            mode=AgentMode.REMOTE,
            agent_namespace=self.settings.agent_namespace,
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
        values = None if self.opener is None else DownstreamValues(self.store, config, self.opener)
        agent = Agent(self.host, self.store, self.store, config, values)
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
            "labels": {**config.owned_labels(), LABEL_KUBECONFIG_COPY: KUBECONFIG_COPY_MARK},
            "annotations": {ANNOTATION_CLUSTER: config.ref},
        },
        "type": source.get("type") or "Opaque",
        "data": dict(source.get("data") or {}),
    }


def _deleting(cluster: Obj) -> bool:
    return bool(cluster["metadata"].get("deletionTimestamp"))
