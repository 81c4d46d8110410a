"""The manager: the controllers of the management cluster wired onto one runtime Host and a Store.

`Manager(store, options, clock)` builds everything; `start()` fills the caches and starts working
(only while holding the leader Lease, with leader election), `stop()` shuts down cleanly. Works on
any Store: KubeStore for `bundler manager`, MemoryStore for the simulator and fast tests. A shard's
manager works through a ShardedStore, which shows it only its own workspaces' objects. With a
`registry`, it exports the fleet state and its counters there (bundler.manager.metrics), and with
`runtime_metrics` its host reports reconciles and queue depth. Values are rendered by the process's
shared pool of template workers for the options' limits (bundler.templating_pool), started at the
first render and stopped when the process exits.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from bundler.api.resources import BUNDLE, CLUSTER, CLUSTER_GROUP
from bundler.manager.context import Context
from bundler.manager.controllers.bootstrap_controller import BootstrapController
from bundler.manager.controllers.bundle_controller import BundleController
from bundler.manager.controllers.cluster_controller import ClusterController
from bundler.manager.controllers.status_controllers import (
    BundleStatusController,
    ClusterStatusController,
    GroupStatusController,
)
from bundler.manager.copies.credentials import CredentialCopies
from bundler.manager.copies.management_values import ValuesCopies
from bundler.manager.events import EventRecorder
from bundler.manager.memo.outcomes import Outcomes
from bundler.manager.memo.own_writes import OwnWrites
from bundler.manager.memo.rows import RowMemo
from bundler.manager.metrics import FleetState, ManagerMetrics
from bundler.manager.observed.liveness import Liveness
from bundler.manager.observed.routing import Router
from bundler.manager.observed.scope import Scope, Scopes
from bundler.manager.options import ManagerOptions
from bundler.manager.work import Stage, Work
from bundler.resolution.image_resolution import ImageResolution
from bundler.resolution.version_resolution import VersionResolution
from bundler.runtime.clock import Clock, SystemClock
from bundler.runtime.controller import Reconcile
from bundler.runtime.host import DEFAULT_STOP_TIMEOUT, Host
from bundler.runtime.informer import Informer
from bundler.runtime.metrics import RuntimeMetrics
from bundler.runtime.timers import Timer
from bundler.store.protocol import Store
from bundler.store.sharded import ShardedStore
from bundler.templating_pool import shared_pool

# What the keys of each stage name, for log lines.
STAGE_KINDS = {
    Stage.BUNDLE: BUNDLE.kind,
    Stage.BUNDLE_STATUS: BUNDLE.kind,
    Stage.CLUSTER: CLUSTER.kind,
    Stage.CLUSTER_STATUS: CLUSTER.kind,
    Stage.GROUP_STATUS: CLUSTER_GROUP.kind,
}


class Manager:
    def __init__(
        self,
        store: Store,
        options: ManagerOptions | None = None,
        clock: Clock | None = None,
        *,
        name: str = "manager",
        registry: CollectorRegistry | None = None,
        runtime_metrics: RuntimeMetrics | None = None,
    ) -> None:
        self.options = options or ManagerOptions()
        self.clock: Clock = clock or SystemClock()
        if self.options.shard is not None:
            store = ShardedStore(store, self.options.shard)
        self.host = Host(
            store,
            clock=self.clock,
            workers=self.options.workers,
            leader_election=self.options.lease(),
            name=name,
            metrics=runtime_metrics,
        )
        workspaces = self.options.workspaces
        scopes = [Scope(self.host, ws) for ws in workspaces] or [Scope(self.host, None)]
        metrics = ManagerMetrics(registry)
        self.ctx = Context(
            store=store,
            clock=self.clock,
            scopes=Scopes(scopes),
            outcomes=Outcomes(),
            liveness=Liveness(self.clock, self.options.offline_after),
            memo=RowMemo(
                shared_pool(self.options.template_limits), self.options.template_bundle_mib << 20
            ),
            resolution=VersionResolution(
                metrics.counting(self.options.resolver), store, self.clock
            ),
            images=ImageResolution(
                metrics.counting_images(self.options.image_resolver), self.clock
            ),
            work=Work(),
            own_writes=OwnWrites(),
            events=EventRecorder(store, self.clock),
            metrics=metrics,
        )
        if registry is not None:
            registry.register(FleetState(self.ctx.scopes, self.ctx.memo, lambda: self.is_leading))
        watched = [s.workspace for s in scopes]
        self._copies = CredentialCopies(store, self.host, watched)
        self._values = ValuesCopies(store, self.host, watched)
        self._clusters = ClusterController(self.ctx)
        self._groups = GroupStatusController(self.ctx)
        reconcilers: dict[Stage, Reconcile] = {
            Stage.BUNDLE: BundleController(self.ctx, self._copies, self._values).reconcile,
            Stage.BUNDLE_STATUS: BundleStatusController(self.ctx).reconcile,
            Stage.CLUSTER: self._clusters.reconcile,
            Stage.CLUSTER_STATUS: ClusterStatusController(self.ctx).reconcile,
            Stage.GROUP_STATUS: self._groups.reconcile,
        }
        for stage, reconcile in reconcilers.items():
            controller = self.host.add_controller(stage.value, reconcile, kind=STAGE_KINDS[stage])
            self.ctx.work.bind(stage, controller)
        for scope in scopes:
            Router(self.ctx, scope).attach()
        self._bootstrap = BootstrapController(self.ctx, self.host)
        if self.options.bootstrap:
            self._bootstrap.attach()
        self._resync_timer: Timer | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Fill the caches (store errors propagate), then reconcile everything once."""
        self.host.start()
        self._schedule_resync()

    def stop(self, timeout: float | None = DEFAULT_STOP_TIMEOUT) -> None:
        if self._resync_timer is not None:
            self._resync_timer.cancel()
        self.host.stop(timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no work is queued, running or due now (False after `timeout` seconds)."""
        return self.host.wait_idle(timeout)

    @property
    def is_leading(self) -> bool:
        return self.host.is_leading

    # -- observation --------------------------------------------------------------------------

    def resync(self) -> None:
        """Look at every object again; in an unchanged world this writes nothing."""
        work = self.ctx.work
        self.ctx.continuations.invalidate_all()
        self.ctx.own_writes.stop_awaiting()
        self._clusters.recheck_agent_role()
        self.ctx.tallies.clear()
        self._groups.members.forget_views()
        for scope in self.ctx.scopes.all:
            bundles = scope.bundles.list_keys()
            clusters = scope.clusters.list_keys()
            work.add_all(Stage.BUNDLE, bundles)
            work.add_all(Stage.BUNDLE_STATUS, bundles)
            work.add_all(Stage.CLUSTER, clusters)
            work.add_all(Stage.CLUSTER_STATUS, clusters)
            work.add_all(Stage.GROUP_STATUS, scope.groups.list_keys())

    def informers(self) -> list[Informer]:
        """Every informer the manager reads, e.g. to check its caches caught up with a server."""
        return [
            *self.ctx.scopes.informers(),
            *self._copies.informers(),
            *self._values.informers(),
            *self._bootstrap.informers(),
        ]

    @property
    def rows_rendered(self) -> int:
        """How many (bundle, cluster) rows were rendered so far: memo misses."""
        return self.ctx.memo.rendered

    @property
    def rows_decided(self) -> int:
        """How many (bundle, cluster) targeting decisions were made so far: memo misses."""
        return self.ctx.memo.decided

    @property
    def rows_planned(self) -> int:
        """How many (bundle, cluster) rows bundle passes looked at so far: every targeted cluster
        in a full pass, the batch (and the clusters waiting for a namespace) in a continuation."""
        return self.ctx.continuations.rows_looked_at

    @property
    def group_members_made(self) -> dict[str, int]:
        """How often each cluster's share of its groups' status was worked out (not found kept):
        once, then again only after its placements changed."""
        return self._groups.members.made()

    @property
    def group_walks(self) -> int:
        """How many ClusterGroup roll-ups walked every cluster of their workspace (the first
        after a start or resync, a new selector, a change of the Bundles' outcomes); the others
        looked at the clusters changed since only."""
        return self._groups.members.walks()

    @property
    def placements_rolled_up(self) -> int:
        """How many (bundle, cluster) placements Bundle status roll-ups put so far: every
        targeted cluster when one is built from scratch, the changed ones otherwise."""
        return self.ctx.tallies.placements_put

    def _schedule_resync(self) -> None:
        self._resync_timer = self.host.timers.call_later(
            self.options.resync_period, self._periodic_resync
        )

    def _periodic_resync(self) -> None:
        self.resync()
        self._schedule_resync()


def start_manager(
    store: Store, options: ManagerOptions | None = None, clock: Clock | None = None
) -> Manager:
    """Build a manager on `store` and start it."""
    manager = Manager(store, options, clock)
    manager.start()
    return manager
