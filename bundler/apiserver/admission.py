"""What a request must pass before it reaches the store, in kube-apiserver's order.

Authorization of the request (bundler.apiserver.rbac), then for writes: the request body limit,
and on the object the write would store - the body, or for a patch the stored object with the
patch applied - the metadata rules and the etcd size limit (bundler.apiserver.limits) and RBAC's
escalation checks (bundler.apiserver.escalation). A body that does not parse, or a patch of an
object that does not exist, is left for the verb to answer as it always has.
"""

from __future__ import annotations

import json

from bundler.api.resources import Verb
from bundler.apiserver.attributes import path_attributes, request_attributes
from bundler.apiserver.authn import UserInfo
from bundler.apiserver.escalation import check_grant
from bundler.apiserver.limits import check_body_size, check_metadata, check_stored_size
from bundler.apiserver.rbac import Authorizer
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.verbs import ApiRequest
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.mergepatch import merge_patch
from bundler.store.protocol import Obj

_WRITES = frozenset({Verb.CREATE, Verb.UPDATE, Verb.PATCH})


def authorize_path(
    authorizer: Authorizer, user: UserInfo, method: str, path: str, query: dict[str, str]
) -> None:
    """Authorize a request no served kind routes: discovery, or a kind that is not served."""
    authorizer.authorize(path_attributes(user, method, path, query))


def admit(
    store: MemoryStore,
    authorizer: Authorizer,
    user: UserInfo,
    request: ApiRequest,
) -> None:
    """Raise the HttpError kube-apiserver would answer this resource request with, if any."""
    route, verb, body = request.route, request.verb, request.body
    authorizer.authorize(request_attributes(user, verb, route, request.query))
    if verb not in _WRITES:
        return
    check_body_size(body)
    old = _current(store, route) if verb is not Verb.CREATE else None
    new = _result(verb, body, old)
    if new is None or (verb is not Verb.CREATE and old is None):
        return
    if not route.status:
        check_metadata(route.resource, new, creating=verb is Verb.CREATE)
    check_stored_size(new)
    if not route.status:
        check_grant(authorizer, user, route.resource, _placed(new, route), old)


def _current(store: MemoryStore, route: ResourceRoute) -> Obj | None:
    try:
        return store.get(route.resource, route.name or "", route.namespace)
    except NotFound:
        return None


def _result(verb: Verb, body: bytes, old: Obj | None) -> Obj | None:
    try:
        parsed = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(parsed, dict):
        return None
    if verb is Verb.PATCH:
        patched = merge_patch(old, parsed) if old is not None else None
        return patched if isinstance(patched, dict) else None
    return parsed


def _placed(obj: Obj, route: ResourceRoute) -> Obj:
    """`obj` with the namespace and name the URL gives it, as the verb will store it."""
    meta = dict(obj.get("metadata") or {})
    if route.namespace is not None:
        meta.setdefault("namespace", route.namespace)
    if route.name is not None:
        meta.setdefault("name", route.name)
    return {**obj, "metadata": meta}
