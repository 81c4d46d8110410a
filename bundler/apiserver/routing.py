"""Kubernetes REST paths to served resources, and HTTP methods to API verbs.

Paths follow the API server's layout: `/api/v1/...` for the core group, `/apis/GROUP/VERSION/...`
for the others, `namespaces/NS/` before the plural of namespaced kinds, `/status` after a name for
the status subresource. A path naming a kind that is not served resolves to nothing (404), which is
how tests simulate a CRD that is not installed.

What a path no handler serves gets depends on who would have served it, as in kube-apiserver:
below a built-in group-version (`/api/v1`, `/apis/rbac.authorization.k8s.io/v1`, ...) its REST
container answers a 404 Status, and a method it has no route for a 405 Status; anything else
falls through to the plain-text `404 page not found` of the server's last handler. Custom
resources are served by apiextensions-apiserver's handler, which reads the verb from the method
alone: a POST to an object's path creates (the name in the path is ignored), a PUT or PATCH of a
collection is 400 `name must be provided`, a request for a namespaced kind outside a namespace
(other than list and watch) falls through to the plain 404, and a verb the status subresource does
not have is 405 `<verb> is not supported on resources of kind "<plural>.<group>"`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bundler.api.resources import Resource, Verb
from bundler.apiserver.statuses import HttpError

# Groups whose kinds kube-apiserver serves itself (not through CRDs): REST containers answer
# what they do not route with a Status.
BUILT_IN_GROUPS = frozenset(
    {"", "rbac.authorization.k8s.io", "coordination.k8s.io", "apiextensions.k8s.io"}
)
_BUILT_IN_VERSIONS = frozenset({"v1"})
PAGE_NOT_FOUND = "404 page not found\n"


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


def is_built_in(res: Resource) -> bool:
    return res.group in BUILT_IN_GROUPS


def not_found(path: str) -> HttpError:
    """The 404 of a path no served kind routes: a Status below a built-in group-version, the
    plain page otherwise."""
    segments = [s for s in path.split("/") if s]
    if segments[:2] == ["api", "v1"] or (
        len(segments) >= 3
        and segments[0] == "apis"
        and segments[1] in BUILT_IN_GROUPS
        and segments[1]
        and segments[2] in _BUILT_IN_VERSIONS
    ):
        return HttpError(404, "the server could not find the requested resource", details={})
    if segments[:1] == ["api"]:
        return HttpError(404, "the server could not find the requested resource", details={})
    return HttpError(404, PAGE_NOT_FOUND, plain=True)


def verb_of(method: str, route: ResourceRoute, watch: bool) -> Verb:
    """The API verb of a request, or the HttpError kube-apiserver answers a method it does not
    serve on that path with."""
    if is_built_in(route.resource):
        verb = _built_in_verb(method, route, watch)
        if verb is None:
            raise HttpError(
                405, "the server does not allow this method on the requested resource", details={}
            )
        return verb
    return _custom_verb(method, route, watch)


def _built_in_verb(method: str, route: ResourceRoute, watch: bool) -> Verb | None:
    if route.name is None:
        collection = route.namespace is not None or not route.resource.namespaced
        if method == "GET":
            return Verb.WATCH if watch else Verb.LIST
        if method == "POST" and collection:
            return Verb.CREATE
        if method == "DELETE" and collection:
            return Verb.DELETE_COLLECTION
        return None
    if route.status:
        return _STATUS_VERBS.get(method)
    return _OBJECT_VERBS.get(method)


_OBJECT_VERBS = {"GET": Verb.GET, "PUT": Verb.UPDATE, "PATCH": Verb.PATCH, "DELETE": Verb.DELETE}
_STATUS_VERBS = {"GET": Verb.GET, "PUT": Verb.UPDATE, "PATCH": Verb.PATCH}
# The verb apiextensions-apiserver's request info reads from a method, before it looks further.
_CUSTOM_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def _custom_verb(method: str, route: ResourceRoute, watch: bool) -> Verb:
    res = route.resource
    if method == "GET":
        verb = Verb.GET if route.name is not None else Verb.WATCH if watch else Verb.LIST
    elif method == "DELETE":
        verb = Verb.DELETE if route.name is not None else Verb.DELETE_COLLECTION
    elif method in _CUSTOM_VERBS:
        verb = Verb(_CUSTOM_VERBS[method])
    else:
        raise HttpError(405, f"{method} is not supported", details={})
    if res.namespaced and route.namespace is None and verb not in (Verb.LIST, Verb.WATCH):
        raise HttpError(404, PAGE_NOT_FOUND, plain=True)
    if route.status:
        if verb not in (Verb.GET, Verb.UPDATE, Verb.PATCH):
            raise HttpError(
                405,
                f'{verb.value} is not supported on resources of kind "{res.plural}.{res.group}"',
                details={"group": res.group, "kind": res.plural},
            )
        return verb
    if route.name is None and verb in (Verb.UPDATE, Verb.PATCH):
        raise HttpError(400, "name must be provided")
    if verb is Verb.CREATE and route.name is not None:
        return Verb.CREATE  # the name in the path is not read: the body names the object
    return verb
