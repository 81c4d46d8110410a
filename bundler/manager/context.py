"""What every manager controller shares: the store, the clock, the observed world and the memos."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bundler.manager.events import EventRecorder
from bundler.manager.memo.cluster_changes import ClusterChanges
from bundler.manager.memo.continuation import Continuations
from bundler.manager.memo.namespace_setups import Setups
from bundler.manager.memo.outcomes import Outcomes
from bundler.manager.memo.own_writes import OwnWrites
from bundler.manager.memo.rows import RowMemo
from bundler.manager.memo.tallies import Tallies
from bundler.manager.metrics import ManagerMetrics
from bundler.manager.observed.liveness import Liveness
from bundler.manager.observed.scope import Scope, Scopes
from bundler.manager.work import Stage, Work
from bundler.resolution.image_resolution import ImageResolution
from bundler.resolution.version_resolution import VersionResolution
from bundler.runtime.clock import Clock
from bundler.runtime.key import Key
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Store


def split_ref(ref: str) -> Key:
    """A `namespace/name` reference as a queue key."""
    namespace, _, name = ref.partition("/")
    return Key(namespace, name)


@dataclass(frozen=True)
class Context:
    store: Store
    clock: Clock
    scopes: Scopes
    outcomes: Outcomes
    liveness: Liveness
    memo: RowMemo
    resolution: VersionResolution
    images: ImageResolution
    work: Work
    own_writes: OwnWrites
    events: EventRecorder
    metrics: ManagerMetrics = field(default_factory=ManagerMetrics)
    continuations: Continuations = field(default_factory=Continuations)
    tallies: Tallies = field(default_factory=Tallies)
    setups: Setups = field(default_factory=Setups)
    cluster_changes: ClusterChanges = field(default_factory=ClusterChanges)

    def now_iso(self) -> str:
        return rfc3339(self.clock.now())

    def wake_clusters(self, scope: Scope, clusters: Iterable[str]) -> None:
        """Recompute the status of these clusters and of the groups that contain them."""
        for ref in clusters:
            key = split_ref(ref)
            self.cluster_changes.record(key.namespace, ref)
            self.work.add(Stage.CLUSTER_STATUS, key)
            self.work.add_all(Stage.GROUP_STATUS, self.groups_of(scope, key))

    def groups_of(self, scope: Scope, cluster: Key) -> list[Key]:
        """The groups containing a cluster; every group of its workspace once it is gone."""
        model = scope.cluster_models.get(cluster.namespace, cluster.name)
        if model is None:
            return scope.keys_in(scope.groups, cluster.namespace)
        # The memberships are cached per cluster labels: a burst of one cluster's deployment
        # events matches its groups' selectors once.
        return [Key(cluster.namespace, name) for name, _ in scope.memberships(model)]
