"""Discovery documents: `/version`, `/api`, `/api/v1`, `/apis` and `/apis/GROUP[/VERSION]`.

Built from the served resources alone, so a kind that is not served is absent from discovery
exactly as from its REST path. Shapes follow the API server's APIVersions, APIGroupList, APIGroup
and APIResourceList objects, which the `kubernetes` DynamicClient reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bundler.api.crdgen import CRDS
from bundler.api.resources import Resource
from bundler.store.protocol import Obj

_OBJECT_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
_STATUS_VERBS = ["get", "patch", "update"]
_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_STABILITY = {None: 2, "beta": 1, "alpha": 0}
# What the bundler CRDs' names add to discovery: `kubectl get bundler`, `kubectl get bcl`.
_CRD_NAMES: dict[Resource, Obj] = {
    spec.resource: {"shortNames": list(spec.short_names), "categories": ["bundler"]}
    for spec in CRDS
}
# kube-apiserver's short names for the built-in kinds served here (`kubectl get ns`).
_BUILT_IN_NAMES: dict[tuple[str, str], Obj] = {
    ("", "namespaces"): {"shortNames": ["ns"]},
    ("", "serviceaccounts"): {"shortNames": ["sa"]},
}

VERSION_INFO: Obj = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0+bundler-test",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-01-01T00:00:00Z",
    "goVersion": "go1.22.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def document(path: str, served: Iterable[Resource], address: str) -> Obj | None:
    """The discovery document at `path`, or None when the path is not a discovery path."""
    served = list(served)
    segments = [s for s in path.split("/") if s]
    if segments == ["version"]:
        return dict(VERSION_INFO)
    if segments == ["api"]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
        }
    if segments == ["api", "v1"]:
        return _resource_list("", "v1", served)
    if segments == ["apis"]:
        groups = sorted({r.group for r in served if r.group})
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [_group(g, served) for g in groups],
        }
    if len(segments) == 2 and segments[0] == "apis" and _versions(segments[1], served):
        return {"kind": "APIGroup", "apiVersion": "v1", **_group(segments[1], served)}
    if (
        len(segments) == 3
        and segments[0] == "apis"
        and segments[2] in _versions(segments[1], served)
    ):
        return _resource_list(segments[1], segments[2], served)
    return None


def is_discovery_path(path: str) -> bool:
    """Paths that can only be discovery (as opposed to resource paths that may also be 404s)."""
    segments = [s for s in path.split("/") if s]
    return segments in (["version"], ["api"], ["api", "v1"], ["apis"]) or (
        len(segments) in (2, 3) and segments[0] == "apis"
    )


def _versions(group: str, served: list[Resource]) -> list[str]:
    """Served versions of a group, preferred first: GA, beta, alpha; newest first within each."""
    return sorted({r.version for r in served if r.group == group}, key=_priority, reverse=True)


def _priority(version: str) -> tuple[int, int, int]:
    match = _VERSION.fullmatch(version)
    if match is None:
        return (-1, 0, 0)
    major, stability, minor = match.groups()
    return (_STABILITY[stability], int(major), int(minor or 0))


def _group(group: str, served: list[Resource]) -> Obj:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions(group, served)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def _resource_list(group: str, version: str, served: list[Resource]) -> Obj:
    resources: list[Obj] = []
    for res in sorted(served, key=lambda r: r.plural):
        if (res.group, res.version) != (group, version):
            continue
        resources.append(_api_resource(res, res.plural, res.kind.lower(), _OBJECT_VERBS))
        if res.status_subresource:
            resources.append(_api_resource(res, f"{res.plural}/status", "", _STATUS_VERBS))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def _api_resource(res: Resource, name: str, singular: str, verbs: list[str]) -> Obj:
    return {
        "name": name,
        "singularName": singular,
        "namespaced": res.namespaced,
        "kind": res.kind,
        "verbs": list(verbs),
        **(_names(res) if singular else {}),
    }


def _names(res: Resource) -> Obj:
    return _CRD_NAMES.get(res) or _BUILT_IN_NAMES.get((res.group, res.plural), {})
