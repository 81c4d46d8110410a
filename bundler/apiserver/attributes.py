"""What a request asks to do, in the terms Kubernetes' authorizers use, and the 403 a denial gets.

The message is kube-apiserver's, e.g. `secrets "s" is forbidden: User "system:serviceaccount:ns:sa"
cannot get resource "secrets" in API group "" in the namespace "ns"` (`at the cluster scope` for
cluster-wide requests, `cannot get path "/x"` for non-resource paths), with the RBAC authorizer's
reason appended when it met an error (a binding to a missing role).
"""

from __future__ import annotations

from dataclasses import dataclass

from bundler.api.resources import Verb
from bundler.apiserver.authn import UserInfo
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do: Kubernetes' authorizer.Attributes, resource or path."""

    user: UserInfo
    verb: str
    namespace: str = ""
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""

    @property
    def is_resource_request(self) -> bool:
        return bool(self.resource)

    @property
    def combined_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def request_attributes(
    user: UserInfo, verb: Verb, route: ResourceRoute, query: dict[str, str]
) -> Attributes:
    """The attributes of a resource request, with the name a field selector may give a list."""
    name = route.name or ""
    if verb in (Verb.LIST, Verb.WATCH):
        name = _selected_name(query.get("fieldSelector", ""))
    return Attributes(
        user=user,
        verb=verb.value,
        namespace=route.namespace or "",
        api_group=route.resource.group,
        resource=route.resource.plural,
        subresource="status" if route.status else "",
        name=name,
    )


_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def path_attributes(user: UserInfo, method: str, path: str, query: dict[str, str]) -> Attributes:
    """The attributes of a request this server does not route (discovery, or a kind it does not
    serve), read from the path as Kubernetes' request info does: `/api/v1/...` and
    `/apis/GROUP/VERSION/...` with a resource are resource requests, anything else a path."""
    segments = [s for s in path.split("/") if s]
    if segments[:2] == ["api", "v1"]:
        group, rest = "", segments[2:]
    elif len(segments) >= 3 and segments[0] == "apis":
        group, rest = segments[1], segments[3:]
    else:
        rest = []
    if not rest:
        return Attributes(user, method.lower(), path=path)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        rest = rest[2:] if len(rest) > 2 else rest
    name = rest[1] if len(rest) > 1 else ""
    if method == "GET" and not name:
        verb = "watch" if query.get("watch") in ("true", "1") else "list"
        name = _selected_name(query.get("fieldSelector", ""))
    elif method == "GET":
        verb = "get"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _METHOD_VERBS.get(method, method.lower())
    subresource = rest[2] if len(rest) > 2 else ""
    return Attributes(user, verb, namespace, group, rest[0], subresource, name)


def _selected_name(selector: str) -> str:
    """`NAME` when the selector requires exactly `metadata.name=NAME` (and it is a valid name)."""
    terms = [t.strip() for t in selector.split(",") if t.strip()]
    names = {
        value
        for term in terms
        for key, op, value in [_split_term(term)]
        if key == "metadata.name" and op in ("=", "==")
    }
    if len(names) != 1:
        return ""
    name = names.pop()
    return name if name not in ("", ".", "..") and "/" not in name and "%" not in name else ""


def _split_term(term: str) -> tuple[str, str, str]:
    for op in ("!=", "==", "="):
        if op in term:
            key, value = term.split(op, 1)
            return key.strip(), op, value.strip()
    return term, "", ""


def forbidden(attributes: Attributes, reason: str = "") -> HttpError:
    """Kubernetes' 403 for a denied request (responsewriters.Forbidden + errors.NewForbidden)."""
    message = _forbidden_message(attributes)
    if reason:
        message = f"{message}: {reason}"
    if not attributes.is_resource_request:
        return HttpError(403, f"forbidden: {message}", reason="Forbidden", details={})
    return forbidden_error(attributes.api_group, attributes.resource, attributes.name, message)


def forbidden_error(group: str, resource: str, name: str, cause: str) -> HttpError:
    """errors.NewForbidden: `<resource>[.<group>] ["<name>"] is forbidden: <cause>`."""
    qualified = qualified_resource(group, resource)
    subject = f'{qualified} "{name}"' if name else qualified
    # Empty fields are left out, as Kubernetes' omitempty does.
    details: Obj = {k: v for k, v in (("name", name), ("group", group), ("kind", resource)) if v}
    return HttpError(403, f"{subject} is forbidden: {cause}", reason="Forbidden", details=details)


def qualified_resource(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource


def _forbidden_message(attributes: Attributes) -> str:
    user = attributes.user.name
    if not attributes.is_resource_request:
        return f'User "{user}" cannot {attributes.verb} path "{attributes.path}"'
    head = (
        f'User "{user}" cannot {attributes.verb} resource "{attributes.combined_resource}" '
        f'in API group "{attributes.api_group}"'
    )
    if attributes.namespace:
        return f'{head} in the namespace "{attributes.namespace}"'
    return f"{head} at the cluster scope"
