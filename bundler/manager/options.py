"""How one manager runs: the workspaces it watches, its workers, leader election, time limits, and
the resolvers it asks about version ranges and image policies.

Defaults and their reasons:
- `namespaces` empty: every namespace is a workspace.
- the leader Lease `bundler-manager` lives in `lease_namespace`, else in the first watched
  workspace, else in `default`: namespaces that exist wherever the manager may write, so leader
  election never needs a namespace created for it.
- `shard` None: one manager does the whole fleet. With a shard, the manager sees and writes only
  the workspaces the shard owns (bundler.core.shards) and its Lease is the shard's own
  (`bundler-manager-shard-I-of-N`), so every shard has its leader and its standbys.
- `offline_after` 5 minutes: a Cluster whose agent last checked in longer ago counts as Offline.
  An agent that never checked in is given the same grace from the Cluster's creation, so a freshly
  registered cluster reads Pending/WaitApplied, not Offline, while its agent starts.
- `template_limits`: each cluster's values render in the process's shared pool of template
  workers under these bounds (bundler.templating_pool.limits: 256 MiB and 10 s per render).
- `template_bundle_mib` 64: what one Bundle's rendered values may hold across all its clusters
  (bundler.core.planning.held).
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field

from bundler.core.planning.held import DEFAULT_BUNDLE_HELD_MIB
from bundler.core.shards import Shard
from bundler.resolution.resolvers import ImageResolverFn, VersionResolver
from bundler.runtime.host import DEFAULT_WORKERS
from bundler.runtime.leader import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    LeaseConfig,
)
from bundler.templating_pool import TemplateLimits

LEASE_NAME = "bundler-manager"
DEFAULT_LEASE_NAMESPACE = "default"
DEFAULT_OFFLINE_AFTER = 300.0
DEFAULT_RESYNC_PERIOD = 600.0


def default_identity() -> str:
    """Who this process is among leader candidates: host, pid and a random part."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class ManagerOptions:
    namespaces: tuple[str, ...] = ()
    workers: int = DEFAULT_WORKERS
    leader_elect: bool = False
    lease_namespace: str | None = None
    identity: str = field(default_factory=default_identity)
    offline_after: float = DEFAULT_OFFLINE_AFTER
    resync_period: float = DEFAULT_RESYNC_PERIOD
    resolver: VersionResolver | None = None
    image_resolver: ImageResolverFn | None = None
    lease_duration: int = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    # Run the bootstrap controller (bundler.manager.controllers.bootstrap_controller); it watches
    # Flux's HelmReleases, so Flux must be installed on the management cluster.
    bootstrap: bool = False
    shard: Shard | None = None
    template_limits: TemplateLimits = field(default_factory=TemplateLimits)
    template_bundle_mib: int = DEFAULT_BUNDLE_HELD_MIB

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"manager: workers must be at least 1, got {self.workers}")
        if self.offline_after <= 0 or self.resync_period <= 0:
            raise ValueError("manager: offline_after and resync_period must be positive")

    @property
    def workspaces(self) -> tuple[str, ...]:
        """The watched workspaces without repeats, in the order given."""
        return tuple(dict.fromkeys(self.namespaces))

    def lease(self) -> LeaseConfig | None:
        if not self.leader_elect:
            return None
        namespace = self.lease_namespace or next(iter(self.workspaces), DEFAULT_LEASE_NAMESPACE)
        return LeaseConfig(
            name=self.shard.lease_name if self.shard is not None else LEASE_NAME,
            namespace=namespace,
            identity=self.identity,
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
        )
