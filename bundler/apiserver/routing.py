"""Kubernetes REST paths to served resources, and HTTP methods to API verbs.

Paths follow the API server's layout: `/api/v1/...` for the core group, `/apis/GROUP/VERSION/...`
for the others, `namespaces/NS/` before the plural of namespaced kinds, `/status` after a name for
the status subresource. A path naming a kind that is not served resolves to nothing (404), which is
how tests simulate a CRD that is not installed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bundler.api.resources import Resource, Verb


@dataclass(frozen=True)
class ResourceRoute:
    """One request's target: a collection (name None) or an object, maybe its status."""

    resource: Resource
    namespace: str | None
    name: str | None
    status: bool = False


def resolve(path: str, served: Iterable[Resource]) -> ResourceRoute | None:
    """The route of a resource path, or None when it names nothing served."""
    segments = [s for s in path.split("/") if s]
    if segments[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", segments[2:]
    elif len(segments) >= 3 and segments[0] == "apis":
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        return None
    by_plural = {r.plural: r for r in served if (r.group, r.version) == (group, version)}
    namespaced = by_plural.get(rest[2]) if len(rest) >= 3 and rest[0] == "namespaces" else None
    if namespaced is not None and namespaced.namespaced:
        res, namespace, tail = namespaced, rest[1], rest[3:]
    elif rest and rest[0] in by_plural:
        res, namespace, tail = by_plural[rest[0]], None, rest[1:]
    else:
        return None
    return _object_route(res, namespace, tail)


def _object_route(res: Resource, namespace: str | None, tail: list[str]) -> ResourceRoute | None:
    if len(tail) > 2:
        return None
    name = tail[0] if tail else None
    status = len(tail) == 2
    if status and (tail[1] != "status" or not res.status_subresource):
        return None
    if name is not None and res.namespaced and namespace is None:
        return None
    return ResourceRoute(res, namespace, name, status)


def verb_of(method: str, route: ResourceRoute, watch: bool) -> Verb | None:
    """The API verb of a request, or None when the method is not allowed on that path."""
    if route.name is None:
        if method == "GET":
            return Verb.WATCH if watch else Verb.LIST
        if (
            method == "POST"
            and not route.status
            and (route.namespace or not route.resource.namespaced)
        ):
            return Verb.CREATE
        return None
    if route.status:
        return {"GET": Verb.GET, "PUT": Verb.UPDATE, "PATCH": Verb.PATCH}.get(method)
    return {
        "GET": Verb.GET,
        "PUT": Verb.UPDATE,
        "PATCH": Verb.PATCH,
        "DELETE": Verb.DELETE,
    }.get(method)
