"""The non-streaming API verbs against the store: get, list, create, update, patch, delete.

Each takes a routed request and answers with an HTTP code and a JSON body, after the checks the
real API server makes on request bodies (kind, apiVersion, and name/namespace matching the URL).
A write that admission decoded (`ApiRequest.decoded`, a custom resource pruned and defaulted)
stores that object; a patch admission applied is stored as an update of its result, which carries
the resourceVersion it was applied to (bundler.apiserver.admission).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bundler.api.resources import Resource, Verb
from bundler.apiserver.paging import ListQuery, Pager
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.selectors import fields_match, parse_equality_selector, parse_field_selector
from bundler.apiserver.statuses import HttpError, object_details, success
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# Groups of built-in kinds, which answer a finished deletion with a Status rather than the object.
_BUILT_IN_GROUPS = frozenset({"", "rbac.authorization.k8s.io", "coordination.k8s.io"})


@dataclass(frozen=True)
class ApiRequest:
    route: ResourceRoute
    verb: Verb
    query: dict[str, str]
    content_type: str
    body: bytes
    decoded: Obj | None = None


def execute(store: MemoryStore, pager: Pager, request: ApiRequest) -> tuple[int, Obj]:
    """Run one request; store errors propagate for the caller to translate."""
    route = request.route
    res, namespace, name = route.resource, route.namespace, route.name
    if request.verb is Verb.LIST:
        return 200, _list(store, pager, request)
    if name is None:
        return 201, store.create(res, _body_for(request))
    if request.verb is Verb.GET:
        return 200, store.get(res, name, namespace)
    if request.verb is Verb.PATCH and request.decoded is None:
        patch = _patch_for(request)
        if route.status:
            return 200, store.patch_status(res, name, patch, namespace)
        return 200, store.patch(res, name, patch, namespace)
    if request.verb in (Verb.UPDATE, Verb.PATCH):
        body = _body_for(request)
        return 200, store.update_status(res, body) if route.status else store.update(res, body)
    return 200, _delete(store, route, name, _delete_options(request))


def _list(store: MemoryStore, pager: Pager, request: ApiRequest) -> Obj:
    res, query = request.route.resource, request.query
    limit = query.get("limit") or "0"
    if not limit.isdigit():
        raise HttpError(400, f"invalid limit {limit!r}: must be a non-negative integer")
    asked = ListQuery(
        f"{res}/{request.route.namespace or ''}",
        query.get("labelSelector", ""),
        query.get("fieldSelector", ""),
    )
    if query.get("continue"):
        page = pager.next(asked, query["continue"], int(limit), query.get("resourceVersion", ""))
    else:
        labels = parse_equality_selector(asked.label_selector, "labelSelector")
        fields = parse_field_selector(asked.field_selector)
        listed = store.list(res, request.route.namespace, labels)
        items = [obj for obj in listed.items if fields_match(obj, fields)]
        page = pager.first(asked, items, listed.resource_version, int(limit))
    meta: Obj = {"resourceVersion": page.resource_version}
    if page.continue_token is not None:
        meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
    return {
        "apiVersion": res.api_version,
        "kind": f"{res.kind}List",
        "metadata": meta,
        "items": page.items,
    }


def _delete_options(request: ApiRequest) -> Obj:
    """DeleteOptions from the body and query; only background propagation is implemented."""
    options = _json_object(request.body, "DeleteOptions") if request.body.strip() else {}
    policy = request.query.get("propagationPolicy") or options.get("propagationPolicy")
    if policy not in (None, "Background"):
        raise HttpError(
            400,
            f"propagationPolicy {policy} is not supported by the test API server (only Background)",
        )
    return options


def _delete(store: MemoryStore, route: ResourceRoute, name: str, options: Obj) -> Obj:
    res = route.resource
    preconditions = options.get("preconditions") or {}
    if preconditions:
        meta = store.get(res, name, route.namespace)["metadata"]
        for field in ("uid", "resourceVersion"):
            wanted = preconditions.get(field)
            if wanted is not None and wanted != meta.get(field):
                raise HttpError(
                    409,
                    f"precondition failed: {field} in precondition {wanted}, object has "
                    f"{meta.get(field)}",
                    reason="Conflict",
                    details=object_details(res, name),
                )
    result = store.delete_object(res, name, route.namespace)
    meta = result["metadata"]
    if res.group in _BUILT_IN_GROUPS and not meta.get("deletionTimestamp"):
        return success(res, name, meta.get("uid"))
    return result


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as error:
        raise HttpError(400, f"the {what} is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise HttpError(400, f"the {what} must be a JSON object")
    return value


def _body_for(request: ApiRequest) -> Obj:
    """The request body as an object, checked against and completed from the URL."""
    route = request.route
    res = route.resource
    if request.decoded is not None:
        body = request.decoded
    else:
        body = _json_object(request.body, "request body")
    _check_type(res, body)
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise HttpError(400, "metadata must be a JSON object")
    if res.namespaced and meta.setdefault("namespace", route.namespace) != route.namespace:
        raise HttpError(
            400,
            f"the namespace of the provided object ({meta['namespace']}) does not match "
            f"the namespace sent on the request ({route.namespace})",
        )
    if route.name is not None and meta.setdefault("name", route.name) != route.name:
        raise HttpError(
            400,
            f"the name of the object ({meta['name']}) does not match the name on the URL "
            f"({route.name})",
        )
    return body


def _check_type(res: Resource, body: Obj) -> None:
    for field, expected in (("apiVersion", res.api_version), ("kind", res.kind)):
        if body.get(field) not in (None, expected):
            raise HttpError(
                400,
                f"the {field} in the data ({body[field]}) does not match the expected {field} "
                f"({expected})",
            )


def _patch_for(request: ApiRequest) -> Obj:
    # kubectl apply patches built-in kinds strategically; without directives ($patch,
    # $setElementOrder, ...) such a patch of the kinds served here means what a merge patch means.
    strategic = (
        request.content_type == STRATEGIC_MERGE_PATCH
        and request.route.resource.group in _BUILT_IN_GROUPS
    )
    if request.content_type != MERGE_PATCH and not strategic:
        raise HttpError(
            415,
            f"unsupported patch format {request.content_type or 'none'!r}: this server accepts "
            f"{MERGE_PATCH}, and {STRATEGIC_MERGE_PATCH} for built-in kinds",
        )
    patch = _json_object(request.body, "merge patch")
    if strategic and _has_directive(patch):
        raise HttpError(
            415, "strategic merge patch directives ($...) are not supported by the test API server"
        )
    return patch


def _has_directive(value: Any) -> bool:
    if isinstance(value, dict):
        return any(str(k).startswith("$") or _has_directive(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_directive(v) for v in value)
    return False
