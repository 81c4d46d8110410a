"""How kube-apiserver decodes a custom resource: pruned, then defaulted.

The same two steps run on a request's object (where the unknown fields pruned are what
`fieldValidation` reports, bundler.apiserver.field_validation) and on every object read back from
storage (so an object stored before its CRD changed reads as the API server would serve it: fields
the schema no longer knows are gone, new defaults are there).
"""

from __future__ import annotations

from bundler.apiserver.defaulting import apply_defaults
from bundler.apiserver.pruning import prune
from bundler.apiserver.structural import Structural
from bundler.store.protocol import Obj


def decode(obj: Obj, schema: Structural) -> list[str]:
    """Prune and default `obj` in place; the paths of the unknown fields pruned."""
    unknown = prune(obj, schema)
    apply_defaults(obj, schema)
    return unknown


def from_storage(obj: Obj, schema: Structural) -> Obj:
    """`obj`, read from storage, decoded in place."""
    decode(obj, schema)
    return obj
