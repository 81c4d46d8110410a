"""REST paths of a Resource on a Kubernetes API server, and how objects are named in messages."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from bundler.api.resources import Resource
from bundler.store.errors import Invalid


def group_version_path(res: Resource) -> str:
    """The discovery document of the kind's group/version: `/api/v1` or `/apis/GROUP/VERSION`."""
    return f"/apis/{res.group}/{res.version}" if res.group else f"/api/{res.version}"


def collection_path(res: Resource, namespace: str | None) -> str:
    """Where objects of `res` are listed, watched and created; all namespaces when None."""
    base = group_version_path(res)
    if res.namespaced and namespace is not None:
        return f"{base}/namespaces/{_segment(namespace)}/{res.plural}"
    return f"{base}/{res.plural}"


def object_path(res: Resource, name: str, namespace: str | None, *, status: bool = False) -> str:
    """One object, or its status subresource when `status` (and the kind has one)."""
    if res.namespaced and not namespace:
        raise Invalid(
            "metadata.namespace is required for a namespaced kind", obj=describe(res, name, None)
        )
    path = f"{collection_path(res, namespace)}/{_segment(name)}"
    return f"{path}/status" if status and res.status_subresource else path


def describe(res: Resource, name: str | None, namespace: str | None) -> str:
    """How errors name the object: `bundles.bundler.dev/v1alpha1 ns/name`."""
    if name is None:
        return f"{res} in {namespace}" if namespace else str(res)
    return f"{res} {namespace}/{name}" if namespace else f"{res} {name}"


def label_selector(labels: Mapping[str, str] | None) -> str | None:
    """An equality-based labelSelector query value, None when nothing is selected on."""
    if not labels:
        return None
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def _segment(value: str) -> str:
    return quote(value, safe="")
