"""What each cluster adds to the status of its ClusterGroups, kept while its placements stay.

A group's status reads every member's placements (each Bundle of the workspace on it), so a
change to one cluster (its labels, one of its deployments) used to roll every member of every
group containing it up again: the fleet's cost for one cluster's news. Each cluster's
GroupMember (bundler.core.summary) is now kept with what its placements were made from: a number
for the workspace's Bundles and their outcomes (a new one when either changes; a pass records a
new outcome object even when nothing changed, so an equal one counts as the same), the change
number of the cluster's deployments (bundler.manager.observed.indexes.DeploymentIndex), whether it
is offline and whether it is paused. It is made again only when one of them differs.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bundler.api.cluster import Cluster, ClusterGroup
from bundler.core.planning import key as ref
from bundler.core.selectors import selector_matches
from bundler.core.summary import GroupMember, group_member
from bundler.manager.context import Context
from bundler.manager.memo import placements
from bundler.manager.memo.outcomes import Outcome
from bundler.manager.observed.scope import Scope


class GroupMembers:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Per workspace, per cluster: what its member was made from, and the member.
        self._kept: dict[str, dict[str, tuple[tuple[Any, ...], GroupMember]]] = {}
        # Per workspace: its Bundles, the outcome object each Bundle's kept members were made
        # from, and the number standing for both. A pass records a new outcome object even when
        # nothing changed, so an equal one stands in for it.
        self._outcomes: dict[str, tuple[list[str], list[Outcome | None], int]] = {}
        self._stamps = itertools.count(1)
        # Per group: the group model and, per cluster, the model its selector was matched
        # against and the answer (models are never changed in place).
        self._matches: dict[str, tuple[ClusterGroup, dict[str, tuple[Cluster, bool]]]] = {}
        self._made: Counter[str] = Counter()

    def matching(self, group: ClusterGroup, clusters: Sequence[Cluster]) -> list[Cluster]:
        """The clusters `group`'s selector picks, in order; matched again only for a cluster or
        a group that changed."""
        group_ref = ref(group.metadata.namespace, group.metadata.name)
        with self._lock:
            kept_group, kept = self._matches.get(group_ref, (None, {}))
        if kept_group is not group:
            kept = {}
        now: dict[str, tuple[Cluster, bool]] = {}
        found = []
        for cluster in clusters:
            cluster_ref = ref(cluster.metadata.namespace, cluster.metadata.name)
            before = kept.get(cluster_ref)
            if before is not None and before[0] is cluster:
                matches = before[1]
            else:
                matches = selector_matches(group.spec.selector, cluster.metadata.labels)
            now[cluster_ref] = (cluster, matches)
            if matches:
                found.append(cluster)
        with self._lock:
            self._matches[group_ref] = (group, now)
        return found

    def made(self) -> dict[str, int]:
        """How many GroupMembers were made (not found kept) per cluster: observable, as the row
        memo's renders are."""
        with self._lock:
            return dict(self._made)

    def forget_group(self, group_ref: str) -> None:
        with self._lock:
            self._matches.pop(group_ref, None)

    def members(
        self, ctx: Context, scope: Scope, clusters: Sequence[tuple[Cluster, bool]]
    ) -> list[GroupMember]:
        """The GroupMember of each (cluster, offline) of one workspace, in order."""
        if not clusters:
            return []
        workspace = clusters[0][0].metadata.namespace or ""
        stamp = self._outcomes_stamp(ctx, scope, workspace)
        with self._lock:
            in_workspace = self._kept.setdefault(workspace, {})
        found = []
        for cluster, offline in clusters:
            cluster_ref = ref(workspace, cluster.metadata.name)
            change = scope.deployment_models.change_of(cluster_ref)
            inputs = (offline, cluster.spec.paused, stamp, change)
            kept = in_workspace.get(cluster_ref)
            if kept is not None and kept[0] == inputs:
                found.append(kept[1])
                continue
            placed = placements.of_cluster(ctx, scope, cluster, offline)
            made = group_member(cluster_ref, placed)
            with self._lock:
                in_workspace[cluster_ref] = (inputs, made)
                self._made[cluster_ref] += 1
            found.append(made)
        return found

    def _outcomes_stamp(self, ctx: Context, scope: Scope, workspace: str) -> int:
        """A number that changes whenever the workspace's Bundles or one of their outcomes do."""
        bundles = [
            ref(k.namespace, k.name) for k in sorted(scope.keys_in(scope.bundles, workspace))
        ]
        outcomes = [ctx.outcomes.get(bundle) for bundle in bundles]
        with self._lock:
            kept = self._outcomes.get(workspace)
            if kept is not None and kept[0] == bundles and kept[1] == outcomes:
                return kept[2]
            stamp = next(self._stamps)
            self._outcomes[workspace] = (bundles, outcomes, stamp)
            return stamp

    def keep_only(self, workspace: str, clusters: Sequence[Cluster]) -> None:
        """Forget the clusters of `workspace` not among `clusters` (deleted ones)."""
        with self._lock:
            kept = self._kept.get(workspace, {})
            if len(kept) <= len(clusters):
                # nothing to forget yet: a deleted one goes once more are kept than are live
                return
            live = {ref(c.metadata.namespace, c.metadata.name) for c in clusters}
            for cluster_ref in [k for k in kept if k not in live]:
                del kept[cluster_ref]
