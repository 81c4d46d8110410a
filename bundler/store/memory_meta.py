"""Metadata rules the API server enforces: names, metadata shapes, label matching, timestamps.

Kept apart from the store itself so the in-memory backend and the test API server apply the same
checks with the same messages.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bundler.api.resources import NAMESPACE, Resource
from bundler.store.errors import Invalid
from bundler.store.protocol import Obj

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
# Kubernetes' own alphabet for generateName suffixes: no vowels, no look-alike characters.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LENGTH = 5
# Kinds whose names are only path segments, e.g. RBAC's "system:controller:foo".
_PATH_SEGMENT_GROUPS = frozenset({"rbac.authorization.k8s.io"})


def describe(res: Resource, namespace: str | None, name: str) -> str:
    """How messages name one object: `bundles.bundler.dev/v1alpha1 fleet-default/podinfo`."""
    return f"{res} {namespace}/{name}" if namespace else f"{res} {name}"


def rfc3339(moment: datetime) -> str:
    """Kubernetes' timestamp format: UTC, whole seconds, `Z` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def generated_name(prefix: str) -> str:
    """`metadata.generateName` plus a random suffix, as the API server builds it."""
    suffix = "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(_SUFFIX_LENGTH))
    return f"{prefix}{suffix}"


def labels_match(obj: Obj, wanted: Mapping[str, str] | None) -> bool:
    """Equality-based label selection: every wanted label is present with that value."""
    if not wanted:
        return True
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in wanted.items())


def validate_name(res: Resource, name: Any, where: str) -> str:
    """The kind's name rule: DNS label for namespaces, path segment for RBAC, else subdomain."""
    if not isinstance(name, str) or not name:
        raise Invalid("name is required", obj=where, field="metadata.name")
    if res == NAMESPACE:
        _check_dns_label(name, where, "metadata.name")
    elif res.group in _PATH_SEGMENT_GROUPS:
        if name in (".", "..") or "/" in name or "%" in name:
            raise Invalid(f"{name!r} may not be '.', '..' or contain '/' or '%'", obj=where)
    elif len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        raise Invalid(
            f"{name!r} is not a DNS-1123 subdomain (lowercase alphanumerics, '-' and '.', "
            "at most 253 characters)",
            obj=where,
            field="metadata.name",
        )
    return name


def validate_namespace_name(namespace: str, where: str) -> None:
    _check_dns_label(namespace, where, "metadata.namespace")


def validate_metadata(meta: Mapping[str, Any], where: str) -> None:
    """Shapes of the metadata fields the store interprets; values are checked like the API does."""
    _check_string_map(meta, "labels", where)
    _check_string_map(meta, "annotations", where)
    for key, value in (meta.get("labels") or {}).items():
        _check_label(key, value, where)
    finalizers = meta.get("finalizers")
    if finalizers is not None and (
        not isinstance(finalizers, list) or not all(isinstance(f, str) and f for f in finalizers)
    ):
        raise Invalid("must be a list of non-empty strings", obj=where, field="metadata.finalizers")
    owners = meta.get("ownerReferences")
    if owners is None:
        return
    if not isinstance(owners, list):
        raise Invalid("must be a list", obj=where, field="metadata.ownerReferences")
    for index, owner in enumerate(owners):
        field = f"metadata.ownerReferences[{index}]"
        if not isinstance(owner, Mapping):
            raise Invalid("must be an object", obj=where, field=field)
        for key in ("apiVersion", "kind", "name", "uid"):
            if not isinstance(owner.get(key), str) or not owner[key]:
                raise Invalid(f"{key} is required", obj=where, field=field)


def owner_uids(obj: Obj) -> frozenset[str]:
    return frozenset(ref["uid"] for ref in obj["metadata"].get("ownerReferences") or ())


def _check_dns_label(value: str, where: str, field: str) -> None:
    if len(value) > 63 or not _DNS_LABEL.fullmatch(value):
        raise Invalid(
            f"{value!r} is not a DNS-1123 label (lowercase alphanumerics and '-', "
            "at most 63 characters)",
            obj=where,
            field=field,
        )


def _check_string_map(meta: Mapping[str, Any], key: str, where: str) -> None:
    value = meta.get(key)
    if value is None:
        return
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise Invalid("must map strings to strings", obj=where, field=f"metadata.{key}")


def _check_label(key: str, value: str, where: str) -> None:
    prefix, _, name = key.rpartition("/")
    field = f"metadata.labels[{key!r}]"
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        raise Invalid("label key prefix must be a DNS-1123 subdomain", obj=where, field=field)
    if len(name) > 63 or not _LABEL_NAME.fullmatch(name):
        raise Invalid(
            "label key name must be at most 63 alphanumerics, '-', '_' or '.'",
            obj=where,
            field=field,
        )
    if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        raise Invalid(
            "label value must be empty or at most 63 alphanumerics, '-', '_' or '.'",
            obj=where,
            field=field,
        )
