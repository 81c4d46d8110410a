"""The fleet as the dashboard shows it: Bundles, Clusters, ClusterGroups and BundleDeployments as
the watches delivered them, and the matrix of one state per (Bundle, Cluster).

A cell exists where the Bundle targets the Cluster (bundler.core.targeting, as the manager
decides) or a BundleDeployment of the pair exists (one still being deleted, say). Its state is
the placement's (bundler.core.summary.Placement: the BundleDeployment's state, Pending without
one, Offline when the Cluster's Ready condition says its agent is, the pause that holds it), so
the page and `kubectl get` never disagree on the words.

The model is kept incrementally, since a watch event must cost what it changes: a
BundleDeployment recomputes its cell, a Cluster its row (and its targeting when its labels or
annotations changed), a Bundle its column's targeting when its spec changed, a ClusterGroup the
targeting of its workspace. What changed since the last `take_changes` is told as absolute
values (the new state of each changed cell), so a browser applying a change twice, or after a
snapshot that already held it, ends the same. Adding or removing a Bundle or a Cluster changes
the matrix's shape: that change is a `reset`, and browsers read the snapshot again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, CLUSTER_GROUP, Resource
from bundler.api.summary import DeploymentState, DisplayState
from bundler.core.labels import (
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
)
from bundler.core.state import ConditionType
from bundler.core.summary import Placement, paused_by
from bundler.core.targeting import match_targets
from bundler.store.protocol import EventType

log = logging.getLogger(__name__)

# A cell's code is its state's index here (worst first); the snapshot writes it as one digit.
STATES: tuple[DeploymentState, ...] = tuple(DeploymentState)
_CODE = {state: index for index, state in enumerate(STATES)}
NO_CELL = "."
# A change touching more cells than this is sent as a reset: reading the snapshot is cheaper.
MAX_PATCH_CELLS = 4000

Pair = tuple[str, str]  # (bundle key, cluster key), each "namespace/name"


def key_of(model: Bundle | Cluster | ClusterGroup | BundleDeployment) -> str:
    return f"{model.metadata.namespace or ''}/{model.metadata.name}"


def is_offline(cluster: Cluster) -> bool:
    """What the manager decided, by its --offline-after: the Cluster's Ready reason is Offline."""
    conditions = cluster.status.conditions if cluster.status is not None else []
    return any(
        c.type == ConditionType.READY.value and c.reason == DisplayState.OFFLINE.value
        for c in conditions
    )


def bundle_entry(bundle: Bundle) -> dict[str, Any]:
    """A Bundle as the Fleet page's column header shows it."""
    display = bundle.status.display if bundle.status is not None else None
    return {
        "key": key_of(bundle),
        "namespace": bundle.metadata.namespace or "",
        "name": bundle.metadata.name,
        "state": display.state.value if display is not None and display.state else "",
        "ready": display.readyClusters if display is not None else "",
        "version": (display.version if display is not None else None) or "",
        "paused": bundle.spec.paused,
    }


def cluster_entry(cluster: Cluster) -> dict[str, Any]:
    """A Cluster as the Fleet page's row header shows it."""
    display = cluster.status.display if cluster.status is not None else None
    return {
        "key": key_of(cluster),
        "namespace": cluster.metadata.namespace or "",
        "name": cluster.metadata.name,
        "labels": dict(cluster.metadata.labels),
        "state": display.state.value if display is not None and display.state else "",
        "ready": display.readyBundles if display is not None else "",
        "offline": is_offline(cluster),
        "paused": cluster.spec.paused,
    }


@dataclass
class _Changes:
    reset: bool = False
    bundles: set[str] = field(default_factory=set)
    clusters: set[str] = field(default_factory=set)
    cells: set[Pair] = field(default_factory=set)

    def __bool__(self) -> bool:
        return self.reset or bool(self.bundles or self.clusters or self.cells)


class FleetModel:
    """Thread-safe: `apply` is called from the watches' threads, the readers from the server's."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._bundles: dict[str, Bundle] = {}
        self._clusters: dict[str, Cluster] = {}
        self._groups: dict[str, dict[str, ClusterGroup]] = {}
        self._deployments: dict[Pair, BundleDeployment] = {}
        self._pair_of_deployment: dict[str, Pair] = {}
        self._targeted: dict[str, set[str]] = {}
        self._cells: dict[Pair, Placement] = {}
        # The same cells by cluster and by bundle: a row or a column costs its own size.
        self._rows: dict[str, dict[str, Placement]] = {}
        self._columns: dict[str, dict[str, Placement]] = {}
        self._changes = _Changes()
        self._version = 0
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """`listener()` after every change (on the watch's thread: it must be quick)."""
        self._listeners.append(listener)

    # -- watch events ---------------------------------------------------------------------------

    def apply(self, res: Resource, event: EventType, obj: Mapping[str, Any]) -> None:
        """One watch event of one of the four kinds."""
        model = _parse(res, obj)
        if model is None:
            return
        deleted = event is EventType.DELETED
        with self._lock:
            if isinstance(model, Bundle):
                self._remove_bundle(model) if deleted else self._put_bundle(model)
            elif isinstance(model, Cluster):
                self._remove_cluster(model) if deleted else self._put_cluster(model)
            elif isinstance(model, ClusterGroup):
                self._remove_group(model) if deleted else self._put_group(model)
            else:
                self._remove_deployment(model) if deleted else self._put_deployment(model)
            changed = bool(self._changes)
        if changed:
            for listener in self._listeners:
                listener()

    def _put_bundle(self, bundle: Bundle) -> None:
        key = key_of(bundle)
        old = self._bundles.get(key)
        self._bundles[key] = bundle
        self._changes.bundles.add(key)
        if old is None:
            self._changes.reset = True
        if old is None or old.spec != bundle.spec:
            self._target_bundle(key)

    def _remove_bundle(self, bundle: Bundle) -> None:
        key = key_of(bundle)
        if self._bundles.pop(key, None) is None:
            return
        clusters = self._targeted.pop(key, set()) | set(self._columns.get(key, {}))
        self._recompute(key, clusters)
        self._changes.reset = True

    def _put_cluster(self, cluster: Cluster) -> None:
        key = key_of(cluster)
        old = self._clusters.get(key)
        self._clusters[key] = cluster
        self._changes.clusters.add(key)
        if old is None:
            self._changes.reset = True
        if old is None or _targeting_inputs(old) != _targeting_inputs(cluster):
            self._target_cluster(key)
        else:
            self._recompute_row(key)

    def _remove_cluster(self, cluster: Cluster) -> None:
        key = key_of(cluster)
        if self._clusters.pop(key, None) is None:
            return
        for targeted in self._targeted.values():
            targeted.discard(key)
        self._recompute_row(key)
        self._changes.reset = True

    def _put_group(self, group: ClusterGroup) -> None:
        workspace = group.metadata.namespace or ""
        old = self._groups.setdefault(workspace, {}).get(group.metadata.name)
        self._groups[workspace][group.metadata.name] = group
        if old is None or _targeting_inputs(old) != _targeting_inputs(group):
            self._target_workspace(workspace)

    def _remove_group(self, group: ClusterGroup) -> None:
        workspace = group.metadata.namespace or ""
        if self._groups.get(workspace, {}).pop(group.metadata.name, None) is not None:
            self._target_workspace(workspace)

    def _put_deployment(self, bd: BundleDeployment) -> None:
        pair = _pair(bd)
        if pair is None:
            return
        self._pair_of_deployment[key_of(bd)] = pair
        self._deployments[pair] = bd
        self._recompute(pair[0], (pair[1],))

    def _remove_deployment(self, bd: BundleDeployment) -> None:
        pair = self._pair_of_deployment.pop(key_of(bd), None)
        if pair is None:
            return
        self._deployments.pop(pair, None)
        self._recompute(pair[0], (pair[1],))

    # -- targeting and cells --------------------------------------------------------------------

    def _target_bundle(self, bundle_key: str) -> None:
        bundle = self._bundles[bundle_key]
        workspace = bundle.metadata.namespace or ""
        groups = list(self._groups.get(workspace, {}).values())
        before = self._targeted.get(bundle_key, set())
        now = {
            key
            for key, cluster in self._clusters.items()
            if cluster.metadata.namespace == workspace
            and match_targets(bundle, cluster, groups).deploy
        }
        self._targeted[bundle_key] = now
        self._recompute(bundle_key, before | now)

    def _target_cluster(self, cluster_key: str) -> None:
        cluster = self._clusters[cluster_key]
        workspace = cluster.metadata.namespace or ""
        groups = list(self._groups.get(workspace, {}).values())
        for bundle_key, bundle in self._bundles.items():
            targeted = self._targeted.setdefault(bundle_key, set())
            if (
                bundle.metadata.namespace == workspace
                and match_targets(bundle, cluster, groups).deploy
            ):
                targeted.add(cluster_key)
            else:
                targeted.discard(cluster_key)
        self._recompute_row(cluster_key)

    def _target_workspace(self, workspace: str) -> None:
        for key, bundle in self._bundles.items():
            if bundle.metadata.namespace == workspace:
                self._target_bundle(key)

    def _recompute_row(self, cluster_key: str) -> None:
        for bundle_key in set(self._bundles) | set(self._rows.get(cluster_key, {})):
            self._recompute(bundle_key, (cluster_key,))

    def _recompute(self, bundle_key: str, cluster_keys: Iterable[str]) -> None:
        for cluster_key in cluster_keys:
            pair = (bundle_key, cluster_key)
            placement = self._placement(pair)
            old = self._cells.get(pair)
            if placement is None:
                if self._cells.pop(pair, None) is not None:
                    self._changes.cells.add(pair)
                    _forget(self._rows, cluster_key, bundle_key)
                    _forget(self._columns, bundle_key, cluster_key)
                continue
            self._cells[pair] = placement
            self._rows.setdefault(cluster_key, {})[bundle_key] = placement
            self._columns.setdefault(bundle_key, {})[cluster_key] = placement
            if old is None or old.state is not placement.state:
                self._changes.cells.add(pair)
            if old is None or old != placement:
                self._changes.bundles.add(bundle_key)
                self._changes.clusters.add(cluster_key)

    def _placement(self, pair: Pair) -> Placement | None:
        bundle_key, cluster_key = pair
        deployment = self._deployments.get(pair)
        targeted = cluster_key in self._targeted.get(bundle_key, ())
        if deployment is None and not targeted:
            return None
        bundle, cluster = self._bundles.get(bundle_key), self._clusters.get(cluster_key)
        offline = cluster is not None and is_offline(cluster)
        paused = paused_by(
            bundle is not None and bundle.spec.paused, cluster is not None and cluster.spec.paused
        )
        return Placement(bundle_key, cluster_key, deployment, offline, None, paused)

    # -- readers --------------------------------------------------------------------------------

    def take_changes(self) -> dict[str, Any] | None:
        """What changed since the last call, as one message for the browsers (None: nothing)."""
        with self._lock:
            changes, self._changes = self._changes, _Changes()
            if not changes:
                return None
            self._version += 1
            touched = {
                "bundles": sorted(changes.bundles),
                "clusters": sorted(changes.clusters),
            }
            if changes.reset or len(changes.cells) > MAX_PATCH_CELLS:
                return {"version": self._version, "reset": True, "touched": touched}
            return {
                "version": self._version,
                "reset": False,
                "touched": touched,
                "bundles": [bundle_entry(self._bundles[k]) for k in touched["bundles"]
                            if k in self._bundles],
                "clusters": [cluster_entry(self._clusters[k]) for k in touched["clusters"]
                             if k in self._clusters],
                "cells": [
                    [b, c, _code(self._cells.get((b, c)))] for b, c in sorted(changes.cells)
                ],
            }  # fmt: skip

    def snapshot(self) -> dict[str, Any]:
        """The whole matrix: a row of cell codes per Cluster, a code per Bundle of the columns
        (a digit: the index in `states`; NO_CELL where the Bundle does not reach the Cluster)."""
        with self._lock:
            bundle_keys = sorted(self._bundles)
            cluster_keys = sorted(self._clusters)
            rows = [
                "".join(_code_char(self._cells.get((b, c))) for b in bundle_keys)
                for c in cluster_keys
            ]
            return {
                "version": self._version,
                "states": [s.value for s in STATES],
                "bundles": [bundle_entry(self._bundles[k]) for k in bundle_keys],
                "clusters": [cluster_entry(self._clusters[k]) for k in cluster_keys],
                "cells": rows,
            }

    def bundle(self, key: str) -> Bundle | None:
        with self._lock:
            return self._bundles.get(key)

    def cluster(self, key: str) -> Cluster | None:
        with self._lock:
            return self._clusters.get(key)

    def groups(self, workspace: str) -> list[ClusterGroup]:
        with self._lock:
            return list(self._groups.get(workspace, {}).values())

    def clusters_in(self, workspace: str) -> list[Cluster]:
        """The workspace's Clusters, by name."""
        with self._lock:
            found = [c for c in self._clusters.values() if c.metadata.namespace == workspace]
        return sorted(found, key=lambda c: c.metadata.name)

    def bundles_in(self, workspace: str) -> list[Bundle]:
        with self._lock:
            return [b for b in self._bundles.values() if b.metadata.namespace == workspace]

    def deployment(self, bundle_key: str, cluster_key: str) -> BundleDeployment | None:
        with self._lock:
            return self._deployments.get((bundle_key, cluster_key))

    def placements_of_bundle(self, bundle_key: str) -> dict[str, Placement]:
        """By cluster key."""
        with self._lock:
            return dict(self._columns.get(bundle_key, {}))

    def placements_of_cluster(self, cluster_key: str) -> dict[str, Placement]:
        """By bundle key."""
        with self._lock:
            return dict(self._rows.get(cluster_key, {}))


_MODELS: dict[str, type[Bundle | Cluster | ClusterGroup | BundleDeployment]] = {
    BUNDLE.kind: Bundle,
    CLUSTER.kind: Cluster,
    CLUSTER_GROUP.kind: ClusterGroup,
    BUNDLE_DEPLOYMENT.kind: BundleDeployment,
}


def _parse(
    res: Resource, obj: Mapping[str, Any]
) -> Bundle | Cluster | ClusterGroup | BundleDeployment | None:
    """The object as its model; one the model refuses is logged and left out of the page."""
    try:
        return _MODELS[res.kind].model_validate(obj)
    except ValidationError as error:
        meta = obj.get("metadata") or {}
        where = f"{meta.get('namespace')}/{meta.get('name')}"
        log.warning("%s %s: not shown: %s", res.kind, where, str(error).splitlines()[0])
        return None


def _targeting_inputs(model: Cluster | ClusterGroup) -> tuple[BaseModel | dict[str, str], ...]:
    """What targeting reads of a Cluster or a group besides its name: labels, annotations (the
    import gate), and a group's selector or a Cluster's values (the gate reads values.Cluster)."""
    meta = model.metadata
    return (meta.labels, meta.annotations, model.spec)


def _pair(bd: BundleDeployment) -> Pair | None:
    labels = bd.metadata.labels
    names = (
        labels.get(LABEL_BUNDLE_NAMESPACE),
        labels.get(LABEL_BUNDLE_NAME),
        labels.get(LABEL_CLUSTER_NAMESPACE),
        labels.get(LABEL_CLUSTER_NAME),
    )
    if not all(names):
        return None
    return f"{names[0]}/{names[1]}", f"{names[2]}/{names[3]}"


def _forget(index: dict[str, dict[str, Placement]], outer: str, inner: str) -> None:
    cells = index.get(outer)
    if cells is not None:
        cells.pop(inner, None)
        if not cells:
            del index[outer]


def _code(placement: Placement | None) -> int:
    return -1 if placement is None else _CODE[placement.state]


def _code_char(placement: Placement | None) -> str:
    return NO_CELL if placement is None else str(_CODE[placement.state])
