"""Wiring the Cluster API importer onto a runtime Host: which CAPI version to watch, the informers,
and the three controllers (import, class groups, bounded cleanup).

The server is asked once, at wiring time, which version of `clusters.cluster.x-k8s.io` it serves:
v1beta2, else v1beta1. A server without Cluster API gets no importer (and a log line saying so).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bundler.api.cluster import AgentMode
from bundler.api.resources import (
    CAPI_CLUSTER,
    CAPI_CLUSTER_V1BETA1,
    CLUSTER,
    CLUSTER_GROUP,
    NAMESPACE,
    SECRET,
    Resource,
)
from bundler.capi.caches import ClusterNamespaces, ScopedCache
from bundler.capi.class_groups import ClassGroups, namespace_key
from bundler.capi.cleanup import DEFAULT_CLEANUP_TIMEOUT, ImportCleanup, cluster_of_namespace
from bundler.capi.importer import ClusterImporter
from bundler.core.capi_import import ImportMode
from bundler.runtime.host import Host
from bundler.store.errors import KindNotServed
from bundler.store.protocol import Store

log = logging.getLogger(__name__)

# Newest first: the importer watches the first version the server serves.
CAPI_VERSIONS = (CAPI_CLUSTER, CAPI_CLUSTER_V1BETA1)
DEFAULT_RESYNC_PERIOD = 600.0

IMPORT_CONTROLLER = "capi-import"
CLASS_GROUPS_CONTROLLER = "capi-class-groups"
CLEANUP_CONTROLLER = "capi-cleanup"


@dataclass(frozen=True)
class CapiImportOptions:
    """`--capi-import` and its knobs.

    namespaces: watch only these namespaces (empty: all). cleanup_timeout: how long an imported
    Cluster may hang in deletion before its finalizers are forced off (seconds, runtime clock).
    """

    mode: ImportMode = ImportMode.LABELED
    namespaces: tuple[str, ...] = ()
    cleanup_timeout: float = DEFAULT_CLEANUP_TIMEOUT
    resync_period: float | None = DEFAULT_RESYNC_PERIOD
    default_agent_mode: AgentMode = AgentMode.REMOTE

    def __post_init__(self) -> None:
        if self.cleanup_timeout < 0:
            raise ValueError(f"capi import: cleanup_timeout must be >= 0: {self.cleanup_timeout}")


@dataclass(frozen=True)
class CapiImporter:
    """What `start_capi_importer` put on the host: the watched version and the controllers."""

    resource: Resource
    controllers: tuple[str, ...] = (IMPORT_CONTROLLER, CLASS_GROUPS_CONTROLLER, CLEANUP_CONTROLLER)


def served_capi_resource(store: Store, namespaces: tuple[str, ...] = ()) -> Resource | None:
    """The newest `clusters.cluster.x-k8s.io` version the server serves, or None."""
    for res in CAPI_VERSIONS:
        try:
            store.list(res, namespace=next(iter(namespaces), None))
        except KindNotServed:
            continue
        return res
    return None


def start_capi_importer(
    host: Host, options: CapiImportOptions | None = None
) -> CapiImporter | None:
    """Add the importer's controllers to `host` (they run when it runs); None when there is
    nothing to import: mode `off`, or no Cluster API on the server."""
    options = options or CapiImportOptions()
    if options.mode is ImportMode.OFF:
        return None
    res = served_capi_resource(host.store, options.namespaces)
    if res is None:
        log.warning(
            "capi import is on (--capi-import=%s) but the server serves no Cluster API Cluster "
            "kind (clusters.cluster.x-k8s.io): Cluster API is not installed, nothing is imported "
            "(--capi-import=off says so on purpose)",
            options.mode.value,
        )
        return None
    log.info("capi import: watching %s (mode %s)", res, options.mode.value)
    scoped = options.namespaces
    capi = ScopedCache.on(host, res, scoped)
    clusters = ScopedCache.on(host, CLUSTER, scoped)
    secrets = ScopedCache.on(host, SECRET, scoped)
    groups = ScopedCache.on(host, CLUSTER_GROUP, scoped)
    cluster_namespaces = ClusterNamespaces.on(host, scoped)
    # Namespace labels opt clusters in (labeled mode): every namespace, not only bundler's.
    namespaces = host.informer(NAMESPACE) if options.mode is ImportMode.LABELED else None

    importer = ClusterImporter(
        host.store,
        capi=capi,
        clusters=clusters,
        secrets=secrets,
        namespaces=namespaces,
        mode=options.mode,
        default_agent_mode=options.default_agent_mode,
    )
    primary = capi.sole
    control = host.add_controller(
        IMPORT_CONTROLLER,
        importer,
        primary=primary,
        resync_period=options.resync_period if primary is not None else None,
    )
    if primary is None:
        capi.wake(control)
    clusters.wake(control)
    secrets.wake(control, importer.keys_of_secret)
    if namespaces is not None:
        control.watch(namespaces, importer.keys_of_namespace)

    class_control = host.add_controller(
        CLASS_GROUPS_CONTROLLER, ClassGroups(host.store, clusters=clusters, groups=groups)
    )
    clusters.wake(class_control, namespace_key)
    groups.wake(class_control, namespace_key)

    cleanup = ImportCleanup(
        host.store,
        clusters=clusters.get,
        namespaces=cluster_namespaces.get,
        clock=host.clock,
        timeout=options.cleanup_timeout,
    )
    cleanup_control = host.add_controller(CLEANUP_CONTROLLER, cleanup)
    clusters.wake(cleanup_control)
    cluster_namespaces.wake(cleanup_control, cluster_of_namespace)
    return CapiImporter(res)
