"""The agent of one cluster: a controller on a runtime Host that turns BundleDeployments into Flux
objects and reports the HelmReleases back.

Keys are the BundleDeployments of the cluster namespace, plus one housekeeping key (the Cluster
itself) that fills the caches and sends the heartbeat. Every reconcile is level-triggered: it
compares what the BundleDeployment asks for with what lives downstream and corrects the difference,
whether it was woken by a BundleDeployment, by a Flux object it wrote, or by a resync (one whose
last reconcile changed nothing, with nothing it read changed since, is known to match and is
skipped: bundler.agent.settled). A BundleDeployment that no longer exists (or is being deleted)
has its Flux objects removed; so do objects found at start-up whose BundleDeployment was deleted
while the agent was down. Nothing is ever deleted because a read failed: until the
BundleDeployment cache is filled, work waits.

Mode handover (bundler.core.handover): a pull agent reads its Cluster's mode from the answer to
its heartbeat. Once the Cluster is in remote mode it lets go of every release (suspends and deletes
its HelmReleases, so nothing is uninstalled), applies nothing more and reports
`releasesHandedOver`; back in pull mode it deploys every BundleDeployment again.

Errors: anything transient (the management cluster unreachable, a conflict) is raised and retried
with backoff by the runtime, leaving what is deployed in place. Failures worth reporting (Flux not
installed, a write refused) are written to the BundleDeployment's conditions first.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime

from pydantic import ValidationError

from bundler import __version__
from bundler.agent.caches import FLUX_KINDS, AgentCaches, FluxNotInstalledError
from bundler.agent.config import AgentConfig
from bundler.agent.dependencies import DependencyIndex
from bundler.agent.deploy import Deployer, ReportedError
from bundler.agent.flux_check import flux_status, older_flux_versions
from bundler.agent.health_checks import StoreReader
from bundler.agent.remote_values import DownstreamValues
from bundler.agent.writer import DownstreamWriter
from bundler.api.cluster import AgentMode
from bundler.api.resources import CLUSTER, NAMESPACE
from bundler.core.flux.requirements import FluxReport, flux_problem
from bundler.core.handover import pull_agent_lets_go
from bundler.runtime.controller import Controller, Result
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.store.errors import AlreadyExists, Forbidden, NotFound
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

# Seconds between looks for HelmReleases still terminating after a pull agent let go of them.
HANDOVER_RECHECK = 5.0


class Agent:
    """Start with `start()` on a Host (running or not); `stop()` removes it from the Host."""

    def __init__(
        self,
        host: Host,
        management: Store,
        downstream: Store,
        config: AgentConfig,
        values: DownstreamValues | None = None,
    ) -> None:
        """`values`: in remote mode, where valuesFrom objects are read (closed with the agent)."""
        self.host = host
        self.config = config
        self.management = management
        self.downstream = downstream
        self.values = values
        # The mode is in the name: during a handover on one host (the simulator, a manager
        # bootstrapping its own clusters) the remote agent may still run when the pull one starts.
        self.name = f"{'remote-agent' if config.mode is AgentMode.REMOTE else 'agent'}:{config.ref}"
        self.caches = AgentCaches(config, management, downstream, host.timers)
        objects = values if config.mode is AgentMode.REMOTE else StoreReader(downstream.get)
        self.deployer = Deployer(
            config,
            management,
            self.caches,
            DownstreamWriter(downstream, self.caches),
            host.clock,
            values,
            objects,
        )
        self._housekeeping = Key(config.workspace, config.cluster)
        # When the last heartbeat was written (for the agent's metrics).
        self.last_heartbeat: datetime | None = None
        self._dependencies = DependencyIndex()
        # The Cluster's mode as a pull agent last learned it from its heartbeat: until it is
        # known to be pull, a pull agent applies nothing (a restart in remote mode must not
        # take the releases back); in remote mode it lets go of them, `released` once none of
        # its HelmReleases is left.
        self.learned_mode: AgentMode | None = None
        self.released = False
        # What the last look at the Flux APIs found wrong (None: all served).
        self.flux: FluxReport | None = None
        # Refused after handing its releases over: its identity is gone (said once).
        self.retired = False
        self._controller: Controller | None = None

    def start(self) -> None:
        controller = self.host.add_controller(
            self.name,
            self.reconcile,
            primary=self.caches.bundle_deployments,
            resync_period=self.config.resync_period,
        )
        controller.watch(self.caches.bundle_deployments, self._dependencies.dependents)
        for informer in self.caches.downstream.values():
            controller.watch(informer, self.caches.bd_key_of)
        controller.enqueue(self._housekeeping)
        self._controller = controller

    def stop(self) -> None:
        self.host.remove_controller(self.name)
        self.caches.stop()
        if self.values is not None:
            self.values.close()

    # -- reconcile ----------------------------------------------------------------------------

    def reconcile(self, key: Key) -> Result | None:
        if key == self._housekeeping:
            return self._housekeep()
        self.caches.ensure_management()
        if self.config.mode is AgentMode.PULL and self.learned_mode is not AgentMode.PULL:
            return None  # the heartbeat enqueues every BundleDeployment once it learns pull mode
        observed = self.caches.bundle_deployment(key.name)
        if observed is None or observed["metadata"].get("deletionTimestamp"):
            self._dependencies.forget(key)
            self.deployer.undeploy(key.name, observed)
            return None
        try:
            due = self.deployer.reconcile(observed)
        except ValidationError as err:
            self.deployer.report_unreadable(observed, err)
            return None
        except ReportedError as err:
            # Reported on the BundleDeployment already; the raise only buys the backoff.
            raise err.cause from None
        return None if due is None else Result(requeue_after=due)

    def _housekeep(self) -> Result:
        """Fill the caches, make sure the Flux namespace exists, and send the heartbeat."""
        self.caches.ensure_management()
        if self.config.mode is AgentMode.PULL:
            self._ensure_flux_namespace()
        try:
            # Every delivery's kinds the cluster serves, so objects of any are found (and
            # those left by a deleted BundleDeployment removed); only the baseline's are needed.
            self.caches.ensure_downstream(optional=FLUX_KINDS)
            self.flux = None
        except FluxNotInstalledError as missing:
            # Each BundleDeployment reports it too, and retries with its own backoff.
            older = older_flux_versions(self.downstream, self.config.flux_namespace, missing)
            self.flux = flux_problem(missing.kinds, older)
            log.info("agent %s: %s", self.config.ref, self.flux.message if self.flux else missing)
        self.heartbeat()
        if self.learned_mode is AgentMode.REMOTE and not self.released:
            # Flux has yet to remove its finalizers from the HelmReleases let go of.
            return Result(requeue_after=min(HANDOVER_RECHECK, self.config.heartbeat_interval))
        return Result(requeue_after=self.config.heartbeat_interval)

    def heartbeat(self) -> None:
        """Patch Cluster.status.agent: lastSeen now, this agent's version and mode; a pull agent
        then follows its Cluster's mode, as the answer tells it."""
        now = self.host.clock.now()
        seen: dict[str, object] = {
            "lastSeen": rfc3339(now),
            "version": __version__,
            "mode": self.config.mode.value,
            "flux": flux_status(self.flux),
        }
        if self.config.mode is AgentMode.PULL:
            seen["releasesHandedOver"] = self.released
        try:
            answer = self._patch_agent_status(seen)
            self.last_heartbeat = now
        except NotFound:
            log.warning("agent %s: the Cluster does not exist (yet)", self.config.ref)
            return
        except Forbidden:
            if not self.released:
                raise
            # The manager removes a pull identity once its releases are handed over: refused
            # from then on is the expected end of this agent, not a missing permission.
            if not self.retired:
                self.retired = True
                log.info(
                    "agent %s: its releases were handed over to remote mode and its identity "
                    "removed; nothing is left for it to do: uninstall it",
                    self.config.ref,
                )
            return
        if self.config.mode is AgentMode.PULL:
            self._follow_mode(pull_agent_lets_go(answer))

    def _follow_mode(self, lets_go: bool) -> None:
        """Let go of the releases once the Cluster is in remote mode, and say so once none is
        left (checked again at every heartbeat, which also removes anything a reconcile under
        way wrote meanwhile); in pull mode deploy every BundleDeployment."""
        previous = self.learned_mode
        if lets_go:
            self.learned_mode = AgentMode.REMOTE
            if self.deployer.hand_over() and not self.released:
                self.released = True
                self._patch_agent_status({"releasesHandedOver": True})
                log.info("agent %s: in remote mode; let go of its releases", self.config.ref)
            return
        self.learned_mode = AgentMode.PULL
        if previous is AgentMode.PULL:
            return
        if self.released:
            self.released = False
            self._patch_agent_status({"releasesHandedOver": False})
        if self._controller is not None:
            for key in self.caches.bundle_deployment_keys():
                self._controller.enqueue(key)

    def _patch_agent_status(self, agent: dict[str, object]) -> Obj:
        return self.management.patch_status(
            CLUSTER, self.config.cluster, {"status": {"agent": agent}}, self.config.workspace
        )

    def _ensure_flux_namespace(self) -> None:
        namespace = self.config.flux_namespace
        try:
            self.downstream.get(NAMESPACE, namespace)
        except NotFound:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            with contextlib.suppress(AlreadyExists):
                self.downstream.create(NAMESPACE, body)
        except Forbidden:
            # An agent may read only its own namespace; it exists, since the agent runs in it.
            pass
