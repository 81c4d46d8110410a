"""The agent's view of the world: informer caches on the management and downstream stores.

Management: the BundleDeployments of the cluster namespace. Downstream: the objects of every
delivery's kinds (bundler.core.delivery: for Helm, HelmReleases and chart sources) and the Secrets
this agent wrote (selected by its labels) in the Flux namespace. Nothing here owns a
thread: the caches are started from reconciles (so failures back off like any other work), and
their events only map objects to BundleDeployment keys.

Reads are by key or through the informers' indexes (downstream objects by the BundleDeployment
they were written for, BundleDeployments by their bundle), never by scanning a cache, and hand out
the cached objects themselves, read-only (`Cached`): one reconcile costs the same with 20 or 2,000
BundleDeployments on the cluster.

A cluster without Flux does not serve the Flux kinds: starting those caches raises
FluxNotInstalledError with the kinds, and the next attempt tries again, so installing Flux later
needs no agent restart. Which kinds must be served depends on who asks: housekeeping needs the
baseline delivery's (Helm: bundler.core.delivery.registry.BASELINE), applying a BundleDeployment
its own delivery's; a cluster without kustomize-controller still deploys Helm charts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from bundler.agent.config import AgentConfig
from bundler.api.resources import BUNDLE_DEPLOYMENT, SECRET, Resource
from bundler.core.delivery.registry import BASELINE, DELIVERIES, watched_kinds
from bundler.core.labels import LABEL_BUNDLE_DEPLOYMENT, LABEL_BUNDLE_NAME
from bundler.errors import TransientError
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.runtime.timers import Timers
from bundler.store.errors import KindNotServed
from bundler.store.protocol import Obj, Store

# The deliveries' kinds, in apply order: sources before the workloads that read them.
FLUX_KINDS = watched_kinds()
# Apply order: credentials before the source that reads them, the source before the release.
OWNED_KINDS = (SECRET, *FLUX_KINDS)
# The kinds every cluster must serve (the baseline delivery's).
BASELINE_KINDS = BASELINE.kinds
# The kinds readiness is read from; a kept release's is suspended before its deletion.
WORKLOADS = tuple(dict.fromkeys(delivery.workload for delivery in DELIVERIES))

# An object as a cache holds it: shared, read-only (changing it raises TypeError).
Cached = Mapping[str, Any]


class FluxNotInstalledError(Exception):
    """The downstream cluster does not serve these Flux kinds (Flux is not installed)."""

    def __init__(self, kinds: Iterable[str]) -> None:
        self.kinds = sorted(set(kinds))
        super().__init__(", ".join(self.kinds))


class AgentCaches:
    def __init__(
        self, config: AgentConfig, management: Store, downstream: Store, timers: Timers
    ) -> None:
        self.config = config
        self.bundle_deployments = Informer(
            management,
            BUNDLE_DEPLOYMENT,
            timers,
            namespace=config.cluster_namespace,
            index=bundle_of,
        )
        labels = config.owned_labels()
        self.downstream = {
            res: Informer(
                downstream,
                res,
                timers,
                namespace=config.flux_namespace,
                labels=labels,
                index=written_for,
            )
            for res in OWNED_KINDS
        }
        self._lock = threading.Lock()

    def informers(self) -> list[Informer]:
        return [self.bundle_deployments, *self.downstream.values()]

    def ensure_management(self) -> None:
        """Fill the BundleDeployment cache; store errors propagate (the caller retries)."""
        with self._lock:
            _start(self.bundle_deployments)

    def ensure_downstream(
        self, needed: Iterable[Resource] = BASELINE_KINDS, optional: Iterable[Resource] = ()
    ) -> None:
        """Fill the Secrets' cache and those of the Flux kinds `needed` and `optional`, as the
        cluster serves them; FluxNotInstalledError when some of `needed` are not served (an
        optional kind not served is tried again on the next call that names it). Only the
        kinds named are asked for, so a reconcile of one delivery never lists another's."""
        missing: list[str] = []
        wanted = set(needed)
        asked = wanted | set(optional)
        with self._lock:
            for res, informer in self.downstream.items():
                if res in FLUX_KINDS and res not in asked:
                    continue
                try:
                    _start(informer)
                except KindNotServed:
                    if res not in FLUX_KINDS:
                        raise
                    if res in wanted:
                        missing.append(f"{res.plural}.{res.group}")
        if missing:
            raise FluxNotInstalledError(missing)

    def stop(self) -> None:
        for informer in self.informers():
            informer.stop()

    # -- reads --------------------------------------------------------------------------------

    def bundle_deployment(self, name: str) -> Cached | None:
        if not self.bundle_deployments.has_synced:
            raise TransientError(
                "the BundleDeployment cache has not been filled yet",
                obj=f"namespace {self.config.cluster_namespace}",
            )
        return self.bundle_deployments.view(self.config.cluster_namespace, name)

    def bundle_deployment_keys(self) -> list[Key]:
        return self.bundle_deployments.list_keys()

    def deployments_of(self, bundle: str) -> list[Cached]:
        """The cluster's BundleDeployments of `bundle` (one, unless something else wrote more)."""
        return self.bundle_deployments.indexed(bundle)

    def owned_by(self, bd_name: str) -> list[tuple[Resource, Cached]]:
        """Downstream objects written for the BundleDeployment `bd_name`, in apply order."""
        return [
            (res, obj)
            for res, informer in self.downstream.items()
            if informer.has_synced
            for obj in informer.indexed(bd_name)
        ]

    def owned(self) -> list[tuple[Resource, Obj]]:
        """Every downstream object this agent wrote, workloads (HelmReleases) first."""
        found = [
            (res, obj)
            for res, informer in self.downstream.items()
            if informer.has_synced
            for obj in informer.list(self.config.flux_namespace)
        ]
        return sorted(found, key=lambda pair: pair[0] not in WORKLOADS)

    def live(self, res: Resource, name: str) -> Cached | None:
        return self.downstream[res].view(self.config.flux_namespace, name)

    def bd_key_of(self, obj: Obj) -> list[Key]:
        """The BundleDeployment a downstream object was written for (none: not one of ours)."""
        labels = obj.get("metadata", {}).get("labels") or {}
        owner = labels.get(LABEL_BUNDLE_DEPLOYMENT)
        return [Key(self.config.cluster_namespace, owner)] if owner else []


def bundle_of(obj: Cached) -> str | None:
    """The bundle a BundleDeployment deploys, as bundler.core.flux.bundle_name reads it."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    return str(labels.get(LABEL_BUNDLE_NAME) or meta.get("name") or "") or None


def written_for(obj: Cached) -> str | None:
    """The BundleDeployment a downstream object was written for, by its label."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    owner = labels.get(LABEL_BUNDLE_DEPLOYMENT)
    return str(owner) if owner else None


def _start(informer: Informer) -> None:
    if informer.has_synced:
        return
    informer.start()
    if not informer.has_synced:
        # Another start is listing right now (or the list was overtaken by a stop): try again.
        raise TransientError(f"{informer} is still filling")
