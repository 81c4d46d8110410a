"""What each cluster adds to the status of its ClusterGroups, and each group's members as last
rolled up, so a change to one cluster costs its groups that one cluster.

A group's status reads every member's placements (each Bundle of the workspace on it). Each
cluster's GroupMember (bundler.core.summary) is kept with what its placements were made from: a
number for the workspace's Bundles and their outcomes (a new one when either changes; a pass
records a new outcome object even when nothing changed, so an equal one counts as the same), the
change number of the cluster's deployments (bundler.manager.observed.indexes.DeploymentIndex),
whether it is offline and whether it is paused. It is made again only when one of them differs.

Each group keeps its members (a view) with the Bundles' number and its selector it was walked
with, and the last cluster change it took in (bundler.manager.memo.cluster_changes). A roll-up
looks again only at the clusters changed since; a new selector or a new number for the Bundles
walks the workspace again, as do the first roll-up after a start or a resync and one whose
changes the log no longer holds.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bundler.api.cluster import Cluster, ClusterGroup, ClusterGroupSpec
from bundler.core.planning import key as ref
from bundler.core.selectors import selector_matches
from bundler.core.summary import GroupMember, GroupTally, group_member
from bundler.manager.context import Context, split_ref
from bundler.manager.memo import placements
from bundler.manager.memo.outcomes import Outcome
from bundler.manager.observed.scope import Scope


@dataclass
class _View:
    """One group's members as last rolled up."""

    workspace: str
    spec: ClusterGroupSpec
    stamp: int
    seen: int
    members: GroupTally


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
        self._views: dict[str, _View] = {}
        self._made: Counter[str] = Counter()
        self._walks = 0

    def of_group(self, ctx: Context, scope: Scope, group: ClusterGroup) -> GroupTally:
        """The members of `group`, counted."""
        group_ref = ref(group.metadata.namespace, group.metadata.name)
        workspace = group.metadata.namespace or ""
        stamp = self._outcomes_stamp(ctx, scope, workspace)
        with self._lock:
            view = self._views.get(group_ref)
        changes = None
        if view is not None and view.stamp == stamp and view.spec == group.spec:
            changes = ctx.cluster_changes.since(workspace, view.seen)
        if view is None or changes is None:
            view = self._walk(ctx, scope, group, stamp)
        else:
            changed, view.seen = changes
            for cluster_ref in changed:
                self._look_again(ctx, scope, view, cluster_ref)
        with self._lock:
            self._views[group_ref] = view
            taken_in = min(v.seen for v in self._views.values() if v.workspace == workspace)
        ctx.cluster_changes.forget_through(workspace, taken_in)
        return view.members

    def made(self) -> dict[str, int]:
        """How many GroupMembers were made (not found kept) per cluster: observable, as the row
        memo's renders are."""
        with self._lock:
            return dict(self._made)

    def walks(self) -> int:
        """How many roll-ups walked their whole workspace."""
        with self._lock:
            return self._walks

    def forget_group(self, group_ref: str) -> None:
        with self._lock:
            self._views.pop(group_ref, None)

    def forget_views(self) -> None:
        """Every group walks its workspace at its next roll-up (a resync)."""
        with self._lock:
            self._views.clear()

    def _walk(self, ctx: Context, scope: Scope, group: ClusterGroup, stamp: int) -> _View:
        workspace = group.metadata.namespace or ""
        # Taken first: a change recorded during the walk is looked at again next time.
        seen = ctx.cluster_changes.latest()
        clusters = scope.live_clusters(workspace)
        self._keep_only(workspace, clusters)
        view = _View(workspace, group.spec, stamp, seen, GroupTally())
        for cluster in clusters:
            if selector_matches(group.spec.selector, cluster.metadata.labels):
                self._add(ctx, scope, view, cluster)
        with self._lock:
            self._walks += 1
        return view

    def _look_again(self, ctx: Context, scope: Scope, view: _View, cluster_ref: str) -> None:
        key = split_ref(cluster_ref)
        cluster = scope.cluster_models.get(key.namespace, key.name)
        if (
            cluster is None
            or cluster.metadata.deletionTimestamp
            or not selector_matches(view.spec.selector, cluster.metadata.labels)
        ):
            view.members.remove(cluster_ref)
            return
        self._add(ctx, scope, view, cluster)

    def _add(self, ctx: Context, scope: Scope, view: _View, cluster: Cluster) -> None:
        cluster_ref = ref(view.workspace, cluster.metadata.name)
        offline = placements.is_offline(ctx, scope, cluster)
        change = scope.deployment_models.change_of(cluster_ref)
        inputs = (offline, cluster.spec.paused, view.stamp, change)
        with self._lock:
            kept = self._kept.setdefault(view.workspace, {}).get(cluster_ref)
        if kept is not None and kept[0] == inputs:
            made = kept[1]
        else:
            made = group_member(cluster_ref, placements.of_cluster(ctx, scope, cluster, offline))
            with self._lock:
                self._kept[view.workspace][cluster_ref] = (inputs, made)
                self._made[cluster_ref] += 1
        view.members.put(made)

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

    def _keep_only(self, workspace: str, clusters: list[Cluster]) -> None:
        """Forget the members kept for clusters of `workspace` not among `clusters` (deleted)."""
        with self._lock:
            kept = self._kept.get(workspace, {})
            if len(kept) <= len(clusters):
                # nothing to forget yet: a deleted one goes once more are kept than are live
                return
            live = {ref(c.metadata.namespace, c.metadata.name) for c in clusters}
            for cluster_ref in [k for k in kept if k not in live]:
                del kept[cluster_ref]
