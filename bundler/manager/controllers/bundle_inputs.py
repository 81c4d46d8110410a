"""What the manager's planning pass of one Bundle resolves, and the rejection each failure is.

The pass (bundler.core.planning.bundle_pass) asks its resolvers in a fixed order; here they read
the workspace as the manager's caches see it: management values objects (the watch of those
labelled for delivery, else one read), version ranges and images through the manager's resolution
caches (bundler.resolution), dependsOn against the workspace's Bundles. A failure that rejects the
Bundle for the pass is raised as `Rejected`, carrying the Ready=False reason and message, and the
cause when it is transient (the controller then retries with backoff).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from bundler.api.bundle import Bundle
from bundler.api.helm import ValuesKind
from bundler.api.resources import CONFIG_MAP
from bundler.core.dependencies import has_selectors, resolve_dependencies
from bundler.core.images.wanted import ImageQuery, ResolvedImages
from bundler.core.management_values import ManagementReference
from bundler.core.planning.inputs import Delivered, Dependencies, ResolvedVersions
from bundler.core.planning.version_query import VersionQuery
from bundler.errors import InvalidInputError, TransientError
from bundler.manager.context import Context
from bundler.manager.memo.outcomes import Rejection
from bundler.manager.observed.scope import Scope
from bundler.resolution.management_values import (
    Delivery,
    ValuesNotFoundError,
    ValuesRefusedError,
    read_delivery,
)
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj

REASON_UNRESOLVED = "VersionNotResolved"
REASON_VALUES_NOT_FOUND = "ValuesNotFound"
REASON_VALUES_REFUSED = "ValuesRefused"


class Rejected(Exception):  # noqa: N818 - it is the outcome, not a fault of the code
    """The Bundle is rejected for this pass; `transient`: the error to retry on, if any;
    `refused`: the management values source whose copies are to be withdrawn, if any."""

    def __init__(
        self,
        why: Rejection,
        transient: TransientError | None = None,
        refused: str | None = None,
    ) -> None:
        super().__init__(why.message)
        self.why = why
        self.transient = transient
        self.refused = refused


@dataclass
class ScopeResolvers:
    """The pass's resolvers over one workspace of the manager. `delivery` is the management
    values read on the way (its sources are what the copies are made from)."""

    ctx: Context
    scope: Scope
    workspace: str
    delivery: Delivery = field(default_factory=Delivery)

    @functools.cached_property
    def kubeconfigs(self) -> Mapping[str, str]:
        """Never to be used as credentials or values: read only when something is checked."""
        return kubeconfig_secrets(self.scope, self.workspace)

    def management_values(
        self, bundle: Bundle, references: Sequence[ManagementReference]
    ) -> Delivered:
        readers: dict[ValuesKind, Callable[[str], Obj | None]] = {
            ValuesKind.SECRET: partial(self.scope.secrets.get, self.workspace),
            ValuesKind.CONFIG_MAP: self._config_map,
        }
        try:
            self.delivery = read_delivery(bundle, references, readers, self.kubeconfigs)
        except ValuesRefusedError as refused:
            why = Rejection(REASON_VALUES_REFUSED, str(refused))
            raise Rejected(why, refused=refused.source) from refused
        except ValuesNotFoundError as missing:
            raise Rejected(Rejection(REASON_VALUES_NOT_FOUND, str(missing))) from missing
        return self.delivery.digests

    def versions(self, bundle: Bundle, queries: Sequence[VersionQuery]) -> ResolvedVersions:
        try:
            return self.ctx.resolution.resolve(bundle, queries)
        except (InvalidInputError, TransientError) as failed:
            transient = failed if isinstance(failed, TransientError) else None
            raise Rejected(Rejection(REASON_UNRESOLVED, str(failed)), transient) from failed

    def images(self, bundle: Bundle, queries: Sequence[ImageQuery]) -> ResolvedImages | None:
        kubeconfigs = self.kubeconfigs if any(i.secretRef for i in bundle.spec.images) else None
        secrets = partial(self.scope.secrets.get, self.workspace)
        return self.ctx.images.resolve(bundle, queries, secrets, kubeconfigs)

    def dependencies(self, bundle: Bundle) -> Dependencies | None:
        if not has_selectors(bundle):
            return None
        return resolve_dependencies(bundle, bundle_labels(self.scope, self.workspace))

    def _config_map(self, name: str) -> Obj | None:
        """A ConfigMap of the workspace: from the watch of those labelled for delivery, else read
        (once per pass that names it: to tell one not labelled from one that does not exist)."""
        found = self.scope.config_maps.get(self.workspace, name)
        if found is not None:
            return found
        try:
            return self.ctx.store.get(CONFIG_MAP, name, self.workspace)
        except NotFound:
            return None


def kubeconfig_secrets(scope: Scope, workspace: str) -> dict[str, str]:
    """The kubeconfig Secrets the Clusters of `workspace` name, with the Cluster naming each."""
    return {
        cluster.spec.kubeConfigSecret: f"{workspace}/{cluster.metadata.name}"
        for cluster in scope.cluster_models.in_namespace(workspace)
        if cluster.spec.kubeConfigSecret
    }


def bundle_labels(scope: Scope, workspace: str) -> dict[str, dict[str, str]]:
    """The Bundles of `workspace` by name, with their labels."""
    found = {}
    for key in scope.keys_in(scope.bundles, workspace):
        obj = scope.bundles.get(key.namespace, key.name)
        if obj is None:
            continue
        labels = obj["metadata"].get("labels") or {}
        found[key.name] = {str(k): str(v) for k, v in labels.items()}
    return found
