"""Management values, read for planning: the workspace objects that `valuesFrom` entries with
`source: Management` name, checked and made into the data of their copies.

`read_delivery` reads the objects a Bundle's references name with the readers it is given (the
manager's caches of the workspace, or a command's store). Each must be meant for delivery
(bundler.core.management_values) and fit a copy (bundler.core.flux.values_copies.COPY_MAX_BYTES);
its copy's data and digest go to planning, which writes the digest into the options (so a change
is a new deploymentID and rolls out under the strategy).

A missing object that is not `optional` rejects the Bundle (ValuesNotFoundError, naming the
object and the field); one not meant for delivery, or too large, rejects it too
(ValuesRefusedError, naming the object, the field and the rule), before its data is used at all.
An `optional` object that does not exist is left out, as Flux leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bundler.api.bundle import Bundle
from bundler.api.helm import ValuesKind
from bundler.core.flux.values_copies import CopyTooLargeError, copy_data, data_digest
from bundler.core.management_values import ManagementReference, delivery_refusal, refusal_message
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError
from bundler.store.protocol import Obj

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
