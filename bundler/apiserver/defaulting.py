"""Defaulting: the schema's `default` values, filled in as kube-apiserver fills them.

apiextensions-apiserver's algorithm, run on every custom resource it decodes (from a request, after
pruning, and from storage, so a default added to a CRD later shows on objects stored before):
top down, a property that is missing, or null where the schema is not `nullable`, gets a copy of
its default; then its fields (known properties and additionalProperties) and list items are
defaulted in turn, a non-nullable null list item or map value getting its schema's default.
"""

from __future__ import annotations

from typing import Any

from bundler.apiserver.structural import MISSING, Structural
from bundler.store.mergepatch import json_copy


def apply_defaults(value: Any, schema: Structural) -> None:
    """Fill the defaults of `schema` into `value`, in place."""
    if not schema.has_defaults:
        return
    if isinstance(value, dict):
        for key, prop in schema.properties.items():
            if prop.default is not MISSING and _absent(value, key, prop):
                value[key] = json_copy(prop.default)
        for key in value:
            child = schema.properties.get(key)
            if child is None and schema.additional is not None:
                child = schema.additional
                if value[key] is None and not child.nullable and child.default is not MISSING:
                    value[key] = json_copy(child.default)
            if child is not None:
                apply_defaults(value[key], child)
    elif isinstance(value, list) and schema.items is not None:
        items = schema.items
        for index, item in enumerate(value):
            if item is None and not items.nullable and items.default is not MISSING:
                value[index] = json_copy(items.default)
            apply_defaults(value[index], items)


def _absent(value: dict[str, Any], key: str, prop: Structural) -> bool:
    return key not in value or (value[key] is None and not prop.nullable)
