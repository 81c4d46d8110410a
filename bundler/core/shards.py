"""Shards: which manager of `count` owns a workspace, and which workspace an object belongs to.

Work is split by workspace (the namespace of Bundles, Clusters and ClusterGroups), not by cluster:
a Bundle targets only the Clusters of its own workspace, so every object the manager writes is
derived from one workspace alone - the BundleDeployments, the cluster namespaces with the agents'
identities and the credentials copies, and the status of the Bundles, Clusters and ClusterGroups.
A Cluster belongs to exactly one workspace, so its status has exactly one writer too. Splitting by
cluster instead would leave a Bundle's status (a roll-up over all its clusters) with several
writers.

The hash is SHA-256 of the workspace name, so every process, on every Python, agrees (Python's
own `hash()` of a string changes per process).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from bundler.api.resources import BUNDLE_DEPLOYMENT, NAMESPACE, Resource
from bundler.core.labels import (
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)

LEASE_PREFIX = "bundler-manager"


def shard_of(workspace: str, count: int) -> int:
    """The index of the shard (of `count`) that owns `workspace`."""
    digest = hashlib.sha256(workspace.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0-based)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard index {self.index} is not in 0..{self.count - 1}")

    def owns(self, workspace: str) -> bool:
        return shard_of(workspace, self.count) == self.index

    @property
    def lease_name(self) -> str:
        """Each shard elects its own leader: one Lease per shard."""
        return f"{LEASE_PREFIX}-shard-{self.index}-of-{self.count}"

    def __str__(self) -> str:
        return f"shard {self.index} of {self.count}"


def workspace_of(res: Resource, obj: dict[str, Any]) -> str | None:
    """The workspace an object belongs to, None for one of no workspace (seen by every shard).

    What bundler writes outside the workspace says whose it is in its labels: a BundleDeployment
    its Bundle's namespace, a cluster namespace and what is in it (ServiceAccount, Roles, token,
    credentials copies) the Cluster's. Anything else belongs to the namespace it is in; a Namespace
    to itself (the importer reads a workspace's own labels). bundler never changes these labels,
    so an object never moves between shards.
    """
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    if res == BUNDLE_DEPLOYMENT and labels.get(LABEL_BUNDLE_NAMESPACE):
        return str(labels[LABEL_BUNDLE_NAMESPACE])
    if labels.get(LABEL_MANAGED_BY) == MANAGED_BY_BUNDLER and labels.get(LABEL_CLUSTER_NAMESPACE):
        return str(labels[LABEL_CLUSTER_NAMESPACE])
    if res.namespaced:
        return str(meta.get("namespace") or "") or None
    if res == NAMESPACE:
        return str(meta.get("name") or "") or None
    return None
