"""Cleanup of deleted imports: an imported Cluster goes once its cluster namespace is gone, and
within a time bound even when its workload cluster is already unreachable.

The importer puts its finalizer `bundler.dev/capi-import` on every Cluster it imports. Deleting one
then goes: the manager's finalizer deletes the cluster namespace (its BundleDeployments and, in
remote mode, its HelmReleases with it) and is removed; Flux uninstalls each release and removes
its own finalizer; once the namespace is gone, this controller removes the import finalizer and
the Cluster is gone. So a Cluster that disappears has nothing left behind.

When CAPI has already torn the workload cluster down, Flux can never uninstall, and the namespace
(and the Cluster with it) would hang forever. So once an imported Cluster has been deleting for
longer than the bound (runtime clock, counted from when this process first saw it deleting), what
holds it is forced off, in the order that lets each deletion finish: the finalizers of
bundler-labelled Flux objects in the cluster namespace, bundler's finalizers on its
BundleDeployments (which are deleted), the namespace itself, and bundler's finalizers on the
Cluster. Clusters registered by hand are never forced.

The cluster namespace is computed from the Cluster's workspace and name, never read from
`status.namespace` (the agent may write its Cluster's status), and nothing in it is touched unless
it carries bundler's labels for that very Cluster: a namespace of that name without them is not
bundler's, and counts as gone.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable

from bundler.api.resources import BUNDLE_DEPLOYMENT, CLUSTER, FLUX_KINDS, NAMESPACE, Resource
from bundler.core.capi_import import capi_owner
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
    is_cluster_namespace_of,
)
from bundler.core.naming import cluster_namespace
from bundler.runtime.clock import Clock
from bundler.runtime.controller import Result
from bundler.runtime.key import Key
from bundler.store.errors import KindNotServed, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

DEFAULT_CLEANUP_TIMEOUT = 600.0
BUNDLER_FINALIZER_PREFIX = "bundler.dev/"
IMPORT_FINALIZER = "bundler.dev/capi-import"

# (namespace, name) -> the cached object; for cluster namespaces, (workspace, name).
Lookup = Callable[[str, str], Obj | None]
FinalizerFilter = Callable[[str], bool]


def is_bundlers(finalizer: str) -> bool:
    return finalizer.startswith(BUNDLER_FINALIZER_PREFIX)


def any_finalizer(_: str) -> bool:
    return True


def is_import_finalizer(finalizer: str) -> bool:
    return finalizer == IMPORT_FINALIZER


def cluster_of_namespace(namespace: Obj) -> Iterable[Key]:
    """The Cluster a cluster namespace belongs to, from the labels the manager gives it."""
    labels = namespace["metadata"].get("labels") or {}
    workspace, name = labels.get(LABEL_CLUSTER_NAMESPACE), labels.get(LABEL_CLUSTER_NAME)
    return (Key(workspace, name),) if workspace and name else ()


def namespace_of(cluster: Obj) -> str:
    """The cluster namespace, computed: `status.namespace` is written by the agent too, so it
    never decides what is deleted."""
    meta = cluster["metadata"]
    return cluster_namespace(meta["namespace"], meta["name"])


def is_namespace_of(namespace: Obj, cluster: Obj) -> bool:
    meta = cluster["metadata"]
    labels = namespace["metadata"].get("labels")
    return is_cluster_namespace_of(labels, meta["namespace"], meta["name"])


class ImportCleanup:
    """`reconcile(key)` for a bundler Cluster key: see the module docstring."""

    def __init__(
        self,
        store: Store,
        *,
        clusters: Lookup,
        namespaces: Lookup,
        clock: Clock,
        timeout: float = DEFAULT_CLEANUP_TIMEOUT,
    ) -> None:
        if timeout < 0:
            raise ValueError(f"capi import: cleanup timeout must not be negative, got {timeout}")
        self._store = store
        self._clusters = clusters
        self._namespaces = namespaces
        self._clock = clock
        self._timeout = timeout
        self._deleting_since: dict[Key, float] = {}
        self._lock = threading.Lock()

    def __call__(self, key: Key) -> Result | None:
        cluster = self._clusters(key.namespace, key.name)
        if cluster is None or not _deleting(cluster) or capi_owner(cluster) is None:
            with self._lock:
                self._deleting_since.pop(key, None)
            return None
        now = self._clock.monotonic()
        with self._lock:
            since = self._deleting_since.setdefault(key, now)
        if self._cleaned_up(cluster):
            self._drop_finalizers(CLUSTER, cluster, is_import_finalizer)
            return None
        remaining = since + self._timeout - now
        if remaining > 0:
            return Result(requeue_after=remaining)
        # The cache may lag; forcing is rare enough to confirm on a fresh read first.
        try:
            fresh = self._store.get(CLUSTER, key.name, key.namespace)
        except NotFound:
            return None
        if _deleting(fresh):
            self.force(fresh)
        return None

    def _cleaned_up(self, cluster: Obj) -> bool:
        """Only the import finalizer is left, and the cluster namespace is gone."""
        finalizers = cluster["metadata"].get("finalizers") or []
        if IMPORT_FINALIZER not in finalizers:
            return False
        if any(is_bundlers(f) and not is_import_finalizer(f) for f in finalizers):
            return False
        cached = self._namespaces(cluster["metadata"]["namespace"], namespace_of(cluster))
        if cached is not None and is_namespace_of(cached, cluster):
            return False
        return self._own_namespace(cluster) is None

    def _own_namespace(self, cluster: Obj) -> Obj | None:
        """The Cluster's namespace, freshly read, if it exists and carries the Cluster's labels;
        a namespace of that name without them is not bundler's to touch."""
        name = namespace_of(cluster)
        try:
            found = self._store.get(NAMESPACE, name)
        except NotFound:
            return None
        if is_namespace_of(found, cluster):
            return found
        meta = cluster["metadata"]
        log.warning(
            "capi import: leaving namespace %s alone: it lacks Cluster %s/%s's labels (%s, %s, %s)",
            name,
            meta["namespace"],
            meta["name"],
            LABEL_MANAGED_BY,
            LABEL_CLUSTER_NAMESPACE,
            LABEL_CLUSTER_NAME,
        )
        return None

    def force(self, cluster: Obj) -> None:
        """Remove what holds `cluster`'s deletion, from the releases up to the Cluster itself."""
        meta = cluster["metadata"]
        log.warning(
            "capi import: Cluster %s/%s still deleting after %.0fs: forcing its cleanup "
            "(the workload cluster is taken to be unreachable)",
            meta["namespace"],
            meta["name"],
            self._timeout,
        )
        owned = self._own_namespace(cluster)
        if owned is not None:
            self._force_namespace(owned["metadata"]["name"])
        self._drop_finalizers(CLUSTER, cluster, is_bundlers)

    def _force_namespace(self, namespace: str) -> None:
        bundlers = {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER}
        for res in FLUX_KINDS:
            for obj in self._list(res, namespace, bundlers):
                self._drop_finalizers(res, obj, any_finalizer)
        for bd in self._list(BUNDLE_DEPLOYMENT, namespace, None):
            self._drop_finalizers(BUNDLE_DEPLOYMENT, bd, is_bundlers)
            self._delete(BUNDLE_DEPLOYMENT, bd["metadata"]["name"], namespace)
        self._delete(NAMESPACE, namespace, None)

    def _list(self, res: Resource, namespace: str, labels: dict[str, str] | None) -> list[Obj]:
        try:
            return self._store.list(res, namespace=namespace, labels=labels).items
        except KindNotServed:
            return []

    def _drop_finalizers(self, res: Resource, obj: Obj, dropped: FinalizerFilter) -> None:
        meta = obj["metadata"]
        finalizers = meta.get("finalizers") or []
        kept = [f for f in finalizers if not dropped(f)]
        if kept == finalizers:
            return
        # The resourceVersion makes the patch conditional: a Conflict retries from a fresh read.
        patch = {
            "metadata": {"finalizers": kept or None, "resourceVersion": meta["resourceVersion"]}
        }
        with contextlib.suppress(NotFound):
            self._store.patch(res, meta["name"], patch, meta.get("namespace"))
        log.info(
            "capi import: removed finalizers %s from %s %s/%s",
            sorted(set(finalizers) - set(kept)),
            res.kind,
            meta.get("namespace"),
            meta["name"],
        )

    def _delete(self, res: Resource, name: str, namespace: str | None) -> None:
        with contextlib.suppress(NotFound):
            self._store.delete(res, name, namespace)


def _deleting(obj: Obj) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))
