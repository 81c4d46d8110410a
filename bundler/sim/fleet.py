"""A whole fleet in one process: the manager, one agent per cluster and a simulated Flux per
cluster (one simulated controller per delivery, bundler.sim.controllers), all over in-memory
stores, with the production controllers.

Layout:
- the management cluster is one MemoryStore holding the inputs (Bundles, Clusters, ClusterGroups
  and Secrets, such as a Bundle's `helm.secretRef` credentials); the manager runs on it exactly as
  it would on a real management cluster;
- every pull-mode cluster is its own MemoryStore (isolated like a real cluster: its agent writes
  into `bundler-system` there and its Flux sees only its own objects), with an Agent and the
  simulated Flux controllers;
- remote-mode clusters are served by RemoteAgents on the management store, with one set of
  simulated Flux controllers there standing in for Flux on the management cluster; each gets a
  placeholder kubeconfig Secret when the inputs do not carry one.

Agents and Flux instances share one runtime Host (a few workers, one timer thread), so a thousand
clusters cost a thousand small caches and no thread each. With a `registry`, the fleet exports the
metrics of the manager and of every agent there, as their processes would.
"""

from __future__ import annotations

import base64
import contextlib
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from bundler.agent.agent import Agent
from bundler.agent.config import AgentConfig
from bundler.agent.metrics import AgentState
from bundler.agent.remote import RemoteAgents
from bundler.api.cluster import AgentMode, Cluster
from bundler.api.resources import (
    BOOTSTRAP_CONFIG,
    BUNDLE,
    CLUSTER,
    CLUSTER_GROUP,
    CONFIG_MAP,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.core.labels import LABEL_CLUSTER_NAME, LABEL_CLUSTER_NAMESPACE
from bundler.core.naming import DNS1123_LABEL_MAX, shorten_name
from bundler.inputs import World
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.resolution.resolvers import ImageResolverFn, VersionResolver
from bundler.runtime.clock import Clock
from bundler.runtime.host import DEFAULT_STOP_TIMEOUT, Host
from bundler.runtime.metrics import RuntimeMetrics
from bundler.sim.bootstrap import BootstrapSide
from bundler.sim.controllers import SimulatedController, simulated_flux
from bundler.sim.failures import FailurePolicy
from bundler.sim.helm_controller import FluxSettings
from bundler.store.errors import AlreadyExists
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from bundler.templating_pool import TemplateLimits

DEFAULT_FLUX_DELAY = 1.0
DEFAULT_WORKERS = 4
# A fleet is quiet when no work is queued or due within this many clock seconds.
QUIET_HORIZON = 1.0
PLACEHOLDER_KUBECONFIG = "apiVersion: v1\nkind: Config\n# placeholder written by bundler sim\n"


@dataclass(frozen=True)
class FleetOptions:
    """`flux_delay`: mean clock seconds a Helm action takes (each cluster gets 0.5x to 1.5x of it,
    drawn from `seed`); `failures`: what the simulated Flux fails on purpose; `resolver`: how the
    manager resolves version ranges (None: ranges are rejected, as by a manager without one);
    `image_resolver`: how it resolves images (None: the clusters using one are held);
    `template_limits`: the bounds of each cluster's values render (bundler.templating_pool)."""

    flux_delay: float = DEFAULT_FLUX_DELAY
    failures: FailurePolicy = field(default_factory=FailurePolicy)
    seed: int = 0
    workers: int = DEFAULT_WORKERS
    manager_workers: int = DEFAULT_WORKERS
    resolver: VersionResolver | None = None
    image_resolver: ImageResolverFn | None = None
    template_limits: TemplateLimits = field(default_factory=TemplateLimits)


@dataclass
class SimCluster:
    cluster: Cluster
    store: MemoryStore | None = None
    agent: Agent | None = None
    # The simulated Flux controllers on `store`, one per delivery (empty until wired).
    flux: list[SimulatedController] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.cluster.metadata.namespace}/{self.cluster.metadata.name}"


class Fleet:
    def __init__(
        self,
        world: World,
        options: FleetOptions,
        clock: Clock,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.world = world
        self.options = options
        self.clock = clock
        self.store = MemoryStore(clock=clock.now)
        runtime = None if registry is None else RuntimeMetrics(registry)
        self.host = Host(
            self.store, clock=clock, workers=options.workers, name="fleet", metrics=runtime
        )
        manager_options = ManagerOptions(
            workers=options.manager_workers,
            resolver=options.resolver,
            image_resolver=options.image_resolver,
            bootstrap=bool(world.bootstrap_configs),
            template_limits=options.template_limits,
        )
        self.manager = Manager(
            self.store,
            manager_options,
            clock,
            name="manager",
            registry=registry,
            runtime_metrics=runtime,
        )
        self.clusters = [SimCluster(c) for c in world.clusters]
        self._draw = random.Random(options.seed)
        self._lock = threading.Lock()
        self.remote = RemoteAgents(self.host, self.store)
        self.remote_flux = simulated_flux(
            self.host, self.store, self._remote_cluster_of, self._settings(), "flux:remote"
        )
        self._labels = {
            _label_key(c.cluster): dict(c.cluster.metadata.labels) for c in self.clusters
        }
        self._signature: tuple[str, ...] | None = None
        self._started = False
        self._bootstrap = (
            BootstrapSide(self.host, self.store, self._start_bootstrapped_agent)
            if world.bootstrap_configs
            else None
        )
        if registry is not None:
            registry.register(AgentState(self.agents))

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Write the inputs, wire every cluster, then start the controllers."""
        self._write_inputs()
        for sim in self.clusters:
            if sim.cluster.spec.agentMode is AgentMode.PULL:
                self._wire_pull(sim)
        self.remote.start()
        for controller in self.remote_flux:
            controller.start()
        if self._bootstrap is not None:
            self._bootstrap.start()
        self.host.start()
        self.manager.start()
        self._started = True

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT) -> None:
        if self._started:
            self.manager.stop(timeout)
            self.host.stop(timeout)
        self.remote.stop()
        for sim in self.clusters:
            if sim.agent is not None:
                sim.agent.stop()
            for controller in sim.flux:
                controller.stop()
        for controller in self.remote_flux:
            controller.stop()

    def add_cluster(self, cluster: Cluster) -> None:
        """Give a Cluster written after start its downstream side: an agent and a simulated Flux
        on a store of its own (pull mode), or its labels for the remote Flux and a placeholder
        kubeconfig Secret unless it has one (remote mode)."""
        sim = SimCluster(cluster)
        self._labels[_label_key(cluster)] = dict(cluster.metadata.labels)
        self.clusters.append(sim)
        secret = cluster.spec.kubeConfigSecret
        if cluster.spec.agentMode is AgentMode.PULL:
            self._wire_pull(sim)
        elif secret:
            _create(self.store, SECRET, _placeholder_kubeconfig(cluster, secret))

    def _write_inputs(self) -> None:
        for namespace in sorted(self._namespaces()):
            _create(self.store, NAMESPACE, {"metadata": {"name": namespace}})
        # Before the placeholders: a kubeconfig Secret of the inputs is the one a cluster gets.
        for given in self.world.secrets:
            _create(self.store, SECRET, given)
        for given in self.world.config_maps:
            _create(self.store, CONFIG_MAP, given)
        for group in self.world.groups:
            _create(self.store, CLUSTER_GROUP, group.to_wire())
        for sim in self.clusters:
            _create(self.store, CLUSTER, sim.cluster.to_wire())
            secret = sim.cluster.spec.kubeConfigSecret
            if sim.cluster.spec.agentMode is AgentMode.REMOTE and secret:
                _create(self.store, SECRET, _placeholder_kubeconfig(sim.cluster, secret))
        for bundle in self.world.bundles:
            _create(self.store, BUNDLE, bundle.to_wire())
        for config in self.world.bootstrap_configs:
            _create(self.store, BOOTSTRAP_CONFIG, config.to_wire())

    def _namespaces(self) -> set[str]:
        found = {c.cluster.metadata.namespace or "" for c in self.clusters}
        found |= {g.metadata.namespace or "" for g in self.world.groups}
        found |= {b.metadata.namespace or "" for b in self.world.bundles}
        found |= {s["metadata"]["namespace"] for s in self.world.secrets}
        found |= {c["metadata"]["namespace"] for c in self.world.config_maps}
        found |= {c.metadata.namespace or "" for c in self.world.bootstrap_configs}
        return found - {""}

    def _wire_pull(self, sim: SimCluster) -> None:
        meta = sim.cluster.metadata
        sim.store = MemoryStore(clock=self.clock.now)
        config = AgentConfig(workspace=meta.namespace or "", cluster=meta.name)
        sim.agent = Agent(self.host, self.store, sim.store, config)
        labels = dict(meta.labels)
        ref = sim.ref
        sim.flux = simulated_flux(
            self.host, sim.store, lambda _: (ref, labels), self._settings(), f"flux:{ref}"
        )
        sim.agent.start()
        for controller in sim.flux:
            controller.start()

    def _start_bootstrapped_agent(self, workspace: str, name: str) -> None:
        """The bootstrap installed the agent chart: its pull agent and Flux start (once)."""
        with self._lock:
            sim = next(
                (
                    s
                    for s in self.clusters
                    if (s.cluster.metadata.namespace, s.cluster.metadata.name) == (workspace, name)
                ),
                None,
            )
            if sim is None or sim.agent is not None:
                return
            self._wire_pull(sim)

    def _settings(self) -> FluxSettings:
        jitter = 0.5 + self._draw.random()
        return FluxSettings(delay=self.options.flux_delay * jitter, failures=self.options.failures)

    def _remote_cluster_of(self, release: Obj) -> tuple[str, Mapping[str, str]]:
        labels = release.get("metadata", {}).get("labels") or {}
        key = (labels.get(LABEL_CLUSTER_NAMESPACE, ""), labels.get(LABEL_CLUSTER_NAME, ""))
        return "/".join(key), self._labels.get(key, {})

    # -- observation --------------------------------------------------------------------------

    def agents(self) -> list[Agent]:
        """Every running agent: one per pull-mode cluster, and the remote ones."""
        pull = [sim.agent for sim in self.clusters if sim.agent is not None]
        return [*pull, *self.remote.agents().values()]

    def stores(self) -> list[MemoryStore]:
        return [self.store, *(sim.store for sim in self.clusters if sim.store is not None)]

    def is_quiet(self) -> bool:
        """No work queued or due soon on any host, and no Flux action (Helm's) running."""
        controllers = [*self.remote_flux, *(c for s in self.clusters for c in s.flux)]
        return (
            self.host.is_idle(QUIET_HORIZON)
            and self.manager.host.is_idle(QUIET_HORIZON)
            and not any(controller.busy() for controller in controllers)
        )

    def converged(self) -> bool:
        """Quiet, every Bundle's status observed, and nothing written since the last look."""
        if not (self.is_quiet() and self._bundles_observed()):
            self._signature = None
            return False
        signature = tuple(store.list(NAMESPACE).resource_version for store in self.stores())
        settled = signature == self._signature
        self._signature = signature
        return settled

    def _bundles_observed(self) -> bool:
        for bundle in self.store.list(BUNDLE).items:
            status = bundle.get("status") or {}
            if status.get("observedGeneration") != bundle["metadata"].get("generation"):
                return False
        return True


def _label_key(cluster: Cluster) -> tuple[str, str]:
    meta = cluster.metadata
    return (
        shorten_name(meta.namespace or "", DNS1123_LABEL_MAX),
        shorten_name(meta.name, DNS1123_LABEL_MAX),
    )


def _placeholder_kubeconfig(cluster: Cluster, name: str) -> Obj:
    value = base64.b64encode(PLACEHOLDER_KUBECONFIG.encode()).decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": cluster.metadata.namespace},
        "type": "cluster.x-k8s.io/secret",
        "data": {"value": value},
    }


def _create(store: MemoryStore, res: Resource, obj: Obj) -> None:
    with contextlib.suppress(AlreadyExists):
        store.create(res, obj)
