"""The importer's reconcile: one CAPI Cluster key in, its bundler Cluster created, kept, or removed.

Level-triggered on the CAPI Cluster, its namespace's labels, its kubeconfig Secret and the bundler
Cluster itself. The importer owns the Cluster's labels, its gate annotation, its ownerReference to
the CAPI Cluster, its finalizer `bundler.dev/capi-import` (bundler.capi.cleanup) and `spec.values`,
`spec.kubeConfigSecret` and `spec.agentMode`; everything else (`spec.paused`, other annotations and
finalizers, status) is left as others wrote it, and nothing is written when nothing changed.
A Cluster of the same name that no CAPI Cluster controls was made by hand: it is left alone.

The ControlPlane and InfraCluster the CAPI Cluster refers to (bundler.capi.references) are read at
each reconcile and become `spec.values.ControlPlane` and `spec.values.InfraCluster`; they are not
watched, so a CAPI Cluster that refers to any is reconciled again every REFERENCES_RESYNC_S.

A CAPI Cluster that is being deleted, is gone, or is no longer imported has its Cluster deleted
right away, so the manager uninstalls its releases while the workload cluster may still answer;
the ownerReference makes the garbage collector do the same if the importer is not running.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterable
from typing import Any

from bundler.api.cluster import AgentMode
from bundler.api.resources import CLUSTER
from bundler.capi.caches import ScopedCache
from bundler.capi.cleanup import IMPORT_FINALIZER
from bundler.capi.references import ReferenceReader
from bundler.core.capi_import import (
    CAPI_VALUE_MAX_BYTES,
    CapiReference,
    ImportMode,
    capi_owner,
    capi_references,
    capi_values,
    cluster_of_kubeconfig_secret,
    imported_cluster,
    is_capi_cluster,
    kubeconfig_present,
    kubeconfig_secret_name,
    should_import,
)
from bundler.core.labels import ANNOTATION_BOOTSTRAP_MODE, ANNOTATION_IMPORT_GATE
from bundler.runtime.controller import Result
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.store.errors import AlreadyExists, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

# The parts of a Cluster the importer writes; anything else is someone else's.
_OWNED_SPEC = ("values", "kubeConfigSecret", "agentMode")
# How often the objects a CAPI Cluster refers to are read again.
REFERENCES_RESYNC_S = 300.0


class ClusterImporter:
    """`reconcile(key)` for the CAPI Cluster `key`; see the module docstring."""

    def __init__(
        self,
        store: Store,
        *,
        capi: ScopedCache,
        clusters: ScopedCache,
        secrets: ScopedCache,
        namespaces: Informer | None,
        mode: ImportMode,
        default_agent_mode: AgentMode = AgentMode.REMOTE,
    ) -> None:
        self._store = store
        self._capi = capi
        self._clusters = clusters
        self._secrets = secrets
        self._namespaces = namespaces
        self._mode = mode
        self._default_agent_mode = default_agent_mode
        self._references = ReferenceReader(store)

    def __call__(self, key: Key) -> Result | None:
        capi = self._capi.get(key.namespace, key.name)
        existing = self._clusters.get(key.namespace, key.name)
        if capi is None or capi["metadata"].get("deletionTimestamp") or not self._wanted(capi):
            self._release(existing)
            return None
        secret = self._secrets.get(key.namespace, kubeconfig_secret_name(key.name))
        references = capi_references(capi)
        referenced = self._referenced(references)
        _, omitted = capi_values(capi, referenced)
        if omitted:
            log.warning(
                "capi import: %s/%s: %s left out of spec.values, over %d bytes",
                key.namespace, key.name, ", ".join(omitted), CAPI_VALUE_MAX_BYTES,
            )  # fmt: skip
        desired = imported_cluster(
            capi,
            kubeconfig_present=kubeconfig_present(secret),
            default_agent_mode=self._default_agent_mode,
            referenced=referenced,
        )
        desired["metadata"]["finalizers"] = [IMPORT_FINALIZER]
        again = Result(requeue_after=REFERENCES_RESYNC_S) if references else None
        if existing is None:
            existing = self._create(desired)
            if existing is None:
                return again
        self._converge(existing, desired)
        return again

    def _referenced(self, references: Iterable[CapiReference]) -> dict[str, Obj]:
        found = {}
        for ref in references:
            obj = self._references.read(ref)
            if obj is not None:
                found[ref.role] = obj
        return found

    # -- keys other objects wake ----------------------------------------------------------------

    def keys_of_secret(self, secret: Obj) -> Iterable[Key]:
        cluster = cluster_of_kubeconfig_secret(secret["metadata"]["name"])
        return () if cluster is None else (Key(secret["metadata"].get("namespace", ""), cluster),)

    def keys_of_namespace(self, namespace: Obj) -> Iterable[Key]:
        return [Key.of(capi) for capi in self._capi.list(namespace["metadata"]["name"])]

    # -- internals ------------------------------------------------------------------------------

    def _wanted(self, capi: Obj) -> bool:
        meta = capi["metadata"]
        namespace = None
        if self._namespaces is not None:
            namespace = self._namespaces.get(None, meta["namespace"])
        namespace_labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
        return should_import(self._mode, meta.get("labels") or {}, namespace_labels)

    def _release(self, existing: Obj | None) -> None:
        """Delete the Cluster imported under this name, if there is one not already going."""
        if existing is None or capi_owner(existing) is None:
            return
        meta = existing["metadata"]
        if meta.get("deletionTimestamp"):
            return
        log.info("capi import: deleting Cluster %s/%s", meta["namespace"], meta["name"])
        with contextlib.suppress(NotFound):
            self._store.delete(CLUSTER, meta["name"], meta["namespace"])

    def _create(self, desired: Obj) -> Obj | None:
        """Create the Cluster (None); if it exists already (a stale cache), the one to converge."""
        meta = desired["metadata"]
        try:
            self._store.create(CLUSTER, desired)
        except AlreadyExists:
            return self._store.get(CLUSTER, meta["name"], meta["namespace"])
        log.info("capi import: created Cluster %s/%s", meta["namespace"], meta["name"])
        return None

    def _converge(self, existing: Obj, desired: Obj) -> None:
        meta = existing["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        if meta.get("deletionTimestamp"):
            return  # its removal wakes this key again, and the Cluster is created afresh
        if capi_owner(existing) is None:
            log.warning("capi import: Cluster %s exists and was not imported: left alone", where)
            return
        merged = merged_cluster(existing, desired)
        if _canonical(merged) == _canonical(existing):
            return
        self._store.update(CLUSTER, merged)
        log.info("capi import: updated Cluster %s", where)


def merged_cluster(existing: Obj, desired: Obj) -> Obj:
    """`existing` with the importer's parts replaced by `desired`'s (see the module docstring)."""
    merged: dict[str, Any] = json.loads(json.dumps(existing))
    meta, wanted = merged["metadata"], desired["metadata"]
    meta["labels"] = dict(wanted.get("labels") or {})
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k != ANNOTATION_IMPORT_GATE
    }
    annotations.update(wanted.get("annotations") or {})
    _set_or_drop(meta, "annotations", annotations)
    finalizers = list(meta.get("finalizers") or ())
    if IMPORT_FINALIZER not in finalizers:
        finalizers.append(IMPORT_FINALIZER)
    meta["finalizers"] = finalizers
    foreign = [ref for ref in meta.get("ownerReferences") or () if not is_capi_cluster(ref)]
    _set_or_drop(meta, "ownerReferences", foreign + list(wanted.get("ownerReferences") or ()))
    spec = dict(merged.get("spec") or {})
    # Once the bootstrap switched the Cluster to its final mode, the mode is the bootstrap's.
    owned = [
        f for f in _OWNED_SPEC if f != "agentMode" or ANNOTATION_BOOTSTRAP_MODE not in annotations
    ]
    for field in owned:
        spec.pop(field, None)
    spec.update({k: v for k, v in desired["spec"].items() if k in owned})
    merged["spec"] = spec
    return merged


def _set_or_drop(meta: dict[str, Any], key: str, value: Any) -> None:
    if value:
        meta[key] = value
    else:
        meta.pop(key, None)


def _canonical(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    compared = {
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
        "ownerReferences": meta.get("ownerReferences") or [],
        "finalizers": meta.get("finalizers") or [],
        "spec": obj.get("spec") or {},
    }
    return json.dumps(compared, sort_keys=True, separators=(",", ":"))
