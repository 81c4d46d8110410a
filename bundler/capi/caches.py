"""The informer caches the importer reads, scoped to every namespace or to a chosen few.

A manager that watches only some workspaces gets one informer per namespace and kind (a credential
limited to those namespaces can list nothing else); otherwise one cluster-wide informer per kind.
`ScopedCache` hides which, so the reconcilers read one cache either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bundler.api.resources import NAMESPACE, Resource
from bundler.core.labels import LABEL_CLUSTER_NAMESPACE, LABEL_MANAGED_BY, MANAGED_BY_BUNDLER
from bundler.runtime.controller import Controller, KeyMapper, own_key
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.store.protocol import Obj


@dataclass(frozen=True)
class ScopedCache:
    """Informers of one namespaced kind by namespace; the key None holds the cluster-wide one."""

    informers: Mapping[str | None, Informer]

    @classmethod
    def on(cls, host: Host, res: Resource, namespaces: Sequence[str] = ()) -> ScopedCache:
        if not namespaces:
            return cls({None: host.informer(res)})
        return cls({ns: host.informer(res, namespace=ns) for ns in namespaces})

    def _for(self, namespace: str) -> Informer | None:
        return self.informers.get(None) or self.informers.get(namespace)

    def get(self, namespace: str, name: str) -> Obj | None:
        informer = self._for(namespace)
        return None if informer is None else informer.get(namespace, name)

    def list(self, namespace: str) -> list[Obj]:
        """The cached objects in `namespace`."""
        informer = self._for(namespace)
        return [] if informer is None else informer.list(namespace)

    def wake(self, controller: Controller, to_keys: KeyMapper = own_key) -> None:
        """Have every event of these informers enqueue `to_keys(obj)` on `controller`."""
        for informer in self.informers.values():
            controller.watch(informer, to_keys)

    @property
    def sole(self) -> Informer | None:
        """The one informer, when there is one: a controller's resync can walk it."""
        return next(iter(self.informers.values())) if len(self.informers) == 1 else None


@dataclass(frozen=True)
class ClusterNamespaces:
    """The cluster namespaces the manager creates, by workspace (None: every workspace).

    They carry `bundler.dev/managed-by: bundler` and their workspace as a label, so these are the
    very informers the manager's own scopes use: on one host they are shared, not duplicated.
    """

    informers: Mapping[str | None, Informer]

    @classmethod
    def on(cls, host: Host, workspaces: Sequence[str] = ()) -> ClusterNamespaces:
        managed = {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER}
        if not workspaces:
            return cls({None: host.informer(NAMESPACE, None, managed)})
        return cls(
            {
                ws: host.informer(NAMESPACE, None, {**managed, LABEL_CLUSTER_NAMESPACE: ws})
                for ws in workspaces
            }
        )

    def get(self, workspace: str, name: str) -> Obj | None:
        """The cached cluster namespace `name` of a Cluster in `workspace`, or None."""
        informer = self.informers.get(None) or self.informers.get(workspace)
        return None if informer is None else informer.get(None, name)

    def wake(self, controller: Controller, to_keys: KeyMapper) -> None:
        for informer in self.informers.values():
            controller.watch(informer, to_keys)
