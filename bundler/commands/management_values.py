"""What the offline commands know of management values (`valuesFrom` entries with `source:
Management`).

The manager reads those objects in the Bundle's workspace on the management cluster. `render`,
`explain` and `diff` read their inputs: an object among them (a v1 Secret or ConfigMap document,
never printed) is delivered exactly as the manager delivers it (the same rule,
bundler.core.management_values, and the same digest, so the same options and deploymentID); one
that is not is left out of the options, with a warning naming the Bundle, the field and the
object, since the deploymentID printed then differs from the manager's. `diff --live`, which has
the management cluster at hand, reads them there as the manager does.

Neither the chart renders of `--manifests` nor any output show the objects' data: Flux merges
them into the values on the cluster (entries in order, then the inline values over them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster
from bundler.api.helm import ValuesKind
from bundler.api.resources import CONFIG_MAP, SECRET
from bundler.core.management_values import ManagementReference
from bundler.core.planning.inputs import Delivered
from bundler.core.validation import bundle_ref
from bundler.inputs import World
from bundler.resolution.management_values import read_delivery
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj, Store

# (kind, namespace, name) -> the object as the API server stores it, None when not known.
Lookup = Callable[[ValuesKind, str, str], Obj | None]


@dataclass(frozen=True)
class ObjectSource:
    """Where a command looks for management values: `lookup`, described as `where`; `complete`
    when what it does not find does not exist (the management cluster itself)."""

    lookup: Lookup
    where: str
    complete: bool


@dataclass(frozen=True)
class OfflineDelivery:
    """The digests of the objects found, and a warning line for each one not found."""

    digests: Delivered
    warnings: tuple[str, ...] = ()


def deliver(
    bundle: Bundle,
    references: Sequence[ManagementReference],
    clusters: Sequence[Cluster],
    source: ObjectSource,
) -> OfflineDelivery:
    """The management values `references` (of `bundle`) name that `source` holds;
    InvalidInputError (as the manager's rejection says it) for one that is not meant for
    delivery."""
    if not references:
        return OfflineDelivery({})
    workspace = bundle.metadata.namespace or ""
    found = []
    warnings = []
    for reference in references:
        kind, name = reference.ref.kind, reference.ref.name
        if source.lookup(kind, workspace, name) is not None:
            found.append(reference)
            continue
        if source.complete and reference.ref.optional:
            continue  # left out, as the manager leaves it out
        consequence = (
            "the manager holds the Bundle (ValuesNotFound) until it exists"
            if source.complete
            else "its values are left out of the options, so the deploymentID shown is not the "
            "one the manager writes"
        )
        warnings.append(
            f"warning: {bundle_ref(bundle)}: {reference.field}: {kind.value} {workspace}/{name} "
            f"(source: Management) is not found {source.where}: {consequence}"
        )
    readers = {kind: partial(source.lookup, kind, workspace) for kind in ValuesKind}
    kubeconfigs = {
        c.spec.kubeConfigSecret: f"{workspace}/{c.metadata.name}"
        for c in clusters
        if c.spec.kubeConfigSecret and c.metadata.namespace == workspace
    }
    delivery = read_delivery(bundle, found, readers, kubeconfigs)
    return OfflineDelivery(delivery.digests, tuple(warnings))


def in_inputs(world: World) -> ObjectSource:
    """Objects among the input documents."""

    def lookup(kind: ValuesKind, namespace: str, name: str) -> Obj | None:
        return world.stored(kind.value, namespace, name)

    where = "among the inputs (give it as an input document; the management cluster is not read)"
    return ObjectSource(lookup, where, complete=False)


def on_cluster(store: Store) -> ObjectSource:
    """Objects on the management cluster `store` reads."""

    def lookup(kind: ValuesKind, namespace: str, name: str) -> Obj | None:
        res = SECRET if kind is ValuesKind.SECRET else CONFIG_MAP
        try:
            return store.get(res, name, namespace)
        except NotFound:
            return None

    return ObjectSource(lookup, "on the management cluster", complete=True)
