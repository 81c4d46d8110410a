"""Pruning: what kube-apiserver drops from a custom resource as it decodes it, and the paths of
the unknown fields it dropped (what `fieldValidation` reports).

As apiextensions-apiserver's structural pruning and its ObjectMeta coercion do:
- a field the schema does not know (no property, no additionalProperties) is removed, at any depth,
  except below `x-kubernetes-preserve-unknown-fields: true`, where only what the schema describes
  is pruned. At the root, and in an `x-kubernetes-embedded-resource`, `apiVersion`, `kind` and
  `metadata` are kept;
- `metadata` keeps only the fields of ObjectMeta (`metadata.foo` is unknown);
- a null where the schema is not `nullable` and has no default is removed (a default replaces
  it later, bundler.apiserver.defaulting).
Paths are written as the API server writes them, `spec.targets[0].foo`: the metadata ones first,
then the others sorted.
"""

from __future__ import annotations

from typing import Any

from bundler.apiserver.structural import MISSING, Structural
from bundler.store.protocol import Obj

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
# metav1.ObjectMeta's JSON fields (clusterName went in Kubernetes 1.25).
OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


def prune(obj: Obj, schema: Structural) -> list[str]:
    """Remove from the object `obj` what `schema` does not know; the unknown fields' paths."""
    unknown = _prune_metadata(obj)
    found: list[str] = []
    _prune(obj, schema, "", found, root=True)
    _drop_nulls(obj, schema)
    return unknown + sorted(found)


def _prune_metadata(obj: Obj) -> list[str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return []
    unknown = sorted(k for k in meta if k not in OBJECT_META_FIELDS)
    for key in unknown:
        del meta[key]
    return [f"metadata.{key}" for key in unknown]


def _prune(
    value: Any, schema: Structural | None, path: str, found: list[str], *, root: bool
) -> None:
    if schema is not None and schema.preserve_unknown:
        _prune_known(value, schema, path, found)
        return
    if isinstance(value, dict):
        keep_meta = root or (schema is not None and schema.embedded_resource)
        for key in list(value):
            if keep_meta and key in _META_FIELDS:
                continue
            child = schema.child(key) if schema is not None else None
            if child is None:
                found.append(_join(path, key))
                del value[key]
            else:
                _prune(value[key], child, _join(path, key), found, root=False)
    elif isinstance(value, list):
        items = schema.items if schema is not None else None
        for index, item in enumerate(value):
            _prune(item, items, f"{path}[{index}]", found, root=False)


def _prune_known(value: Any, schema: Structural, path: str, found: list[str]) -> None:
    """Below preserve-unknown-fields: unknown fields stay, described ones are pruned inside."""
    if isinstance(value, dict):
        for key, item in value.items():
            if schema.embedded_resource and key in _META_FIELDS:
                continue
            child = schema.child(key)
            if child is not None:
                _prune(item, child, _join(path, key), found, root=False)
    elif isinstance(value, list) and schema.items is not None:
        for index, item in enumerate(value):
            _prune_known(item, schema.items, f"{path}[{index}]", found)


def _drop_nulls(value: Any, schema: Structural | None) -> None:
    if isinstance(value, dict):
        for key in list(value):
            child = schema.child(key) if schema is not None else None
            item = value[key]
            if item is None and child is not None and not child.nullable:
                if child.default is MISSING:
                    del value[key]
            else:
                _drop_nulls(item, child)
    elif isinstance(value, list):
        items = schema.items if schema is not None else None
        for item in value:
            _drop_nulls(item, items)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
