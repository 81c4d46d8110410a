"""Management values for the clusters: the workspace objects that `valuesFrom` entries with
`source: Management` name, read, checked and copied into cluster namespaces.

For each pass of a Bundle, `read_delivery` reads the objects its targeted clusters' entries name
(spec.helm's, and those of the targets that decide for some cluster) from the manager's caches of
the workspace: every Secret (bundler.manager.scope), and the ConfigMaps labelled for delivery (one
labelled watch; a ConfigMap not in it is read once more, to tell a missing one from one not
labelled). Each must be meant for delivery (bundler.core.delivery) and fit a copy
(bundler.core.flux.values_copies.COPY_MAX_BYTES); its copy's data and digest go to planning, which
writes the digest into the options (so a change is a new deploymentID and rolls out under the
strategy), and the copies are made by bundler.manager.copies before a BundleDeployment naming them
is written: Secrets `<release>-mgmt-<kind>-<name>-<digest>` in the cluster namespace, labelled
`bundler.dev/secret-copy: management-values`, owned by the BundleDeployments that name them in
their options, staged options or last Ready options (what a rollback returns to), and deleted once
none does.

A missing object that is not `optional` rejects the Bundle (ValuesNotFoundError, naming the
object and the field); one not meant for delivery, or too large, rejects it too
(ValuesRefusedError, naming the object, the field and the rule), before its data is used at all,
and its copies are deleted from every cluster namespace (the label withdrawn: delivery revoked).
Either way the BundleDeployments stay as they are. An `optional` object that does not exist is
left out, as Flux leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.helm import ValuesKind
from bundler.core.delivery import ManagementReference, delivery_refusal, refusal_message
from bundler.core.flux.values_copies import CopyTooLargeError, copy_data, data_digest
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError
from bundler.manager.copies import CopyKind, SecretCopies
from bundler.runtime.host import Host
from bundler.store.protocol import Obj, Store

MANAGEMENT_VALUES = "management-values"

# Reads an object of the Bundle's workspace by name; None when it does not exist.
Reader = Callable[[str], Obj | None]


class ValuesNotFoundError(InvalidInputError):
    """An object a valuesFrom entry with source: Management names does not exist."""


class ValuesRefusedError(InvalidInputError):
    """An object a valuesFrom entry with source: Management names is not delivered (`source`:
    its key, kind/name)."""

    def __init__(self, message: str, *, source: str, obj: str, field: str) -> None:
        super().__init__(message, obj=obj, field=field)
        self.source = source


@dataclass(frozen=True)
class Delivery:
    """What one pass delivers: the digest of each object by (kind, name), for planning, and what
    each copy holds, by source key."""

    digests: Mapping[tuple[str, str], str] = field(default_factory=dict)
    sources: Mapping[str, Obj] = field(default_factory=dict)


def source_key(kind: str, name: str) -> str:
    return f"{kind}/{name}"


def read_delivery(
    bundle: Bundle,
    references: Sequence[ManagementReference],
    readers: Mapping[ValuesKind, Reader],
    kubeconfig_of: Mapping[str, str] | None = None,
) -> Delivery:
    """The objects `references` name, read with `readers` (by kind), checked and made into
    copies; ValuesNotFoundError or ValuesRefusedError for the first one that cannot be."""
    workspace = bundle.metadata.namespace or ""
    digests: dict[tuple[str, str], str] = {}
    sources: dict[str, Obj] = {}
    for reference in references:
        kind, name = reference.ref.kind, reference.ref.name
        key = source_key(kind.value, name)
        if key in sources:
            continue
        where = f"{kind.value} {workspace}/{name}"
        found = readers[kind](name)
        if found is None:
            if reference.ref.optional:
                continue
            raise ValuesNotFoundError(
                f"{where} does not exist (source: Management reads it in the Bundle's "
                "workspace; optional: true would leave it out)",
                obj=bundle_ref(bundle),
                field=reference.field,
            )
        why = delivery_refusal(found, kind, kubeconfig_of)
        if why is None:
            try:
                data = copy_data(found, kind.value)
            except CopyTooLargeError as err:
                why = f"it {err}"
        if why is not None:
            raise ValuesRefusedError(
                refusal_message(kind, workspace, name, why),
                source=key,
                obj=bundle_ref(bundle),
                field=reference.field,
            )
        digests[reference.key] = data_digest(data)
        sources[key] = {"type": "Opaque", "data": data}
    return Delivery(digests, sources)


def _wanted(options: DeploymentOptions | None) -> dict[str, str]:
    delivered = (options.managementValues if options is not None else None) or ()
    return {d.secretName: source_key(d.kind.value, d.name) for d in delivered}


def _spec_names(spec: Obj) -> set[str]:
    """The copies a BundleDeployment spec (as written) names: in its options, staged options and
    last Ready options."""
    held = [spec.get("options"), spec.get("stagedOptions")]
    held.append((spec.get("lastReady") or {}).get("options"))
    return {
        str(delivered["secretName"])
        for options in held
        for delivered in (options or {}).get("managementValues") or ()
    }


def _copied_from(workspace: str, key: str) -> str:
    kind, _, name = key.partition("/")
    return f"{kind} {workspace}/{name}"


MANAGEMENT = CopyKind(
    mark=MANAGEMENT_VALUES,
    what="the management values",
    remedy="remove that Secret, or rename the Bundle",
    wanted=_wanted,
    named=_spec_names,
    copied_from=_copied_from,
)


class ValuesCopies(SecretCopies):
    """The management values copies of one manager."""

    def __init__(self, store: Store, host: Host, workspaces: Iterable[str | None]) -> None:
        super().__init__(store, host, workspaces, MANAGEMENT)
