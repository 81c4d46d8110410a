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
from datetime import UTC, datetime
from typing import Any

from bundler.api.resources import NAMESPACE, Resource, Verb
from bundler.apiserver import field_errors
from bundler.apiserver.paging import ListQuery, Pager
from bundler.apiserver.routing import ResourceRoute, is_built_in
from bundler.apiserver.selectors import fields_match, parse_equality_selector, parse_field_selector
from bundler.apiserver.statuses import HttpError, precondition_failed, success
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.memory_defaults import PHASE_TERMINATING
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Obj

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# Patches kube-apiserver takes that the stand-in does not (design: writes are create, update and
# merge patch): refused with 415 and a message of the stand-in's own.
_UNSERVED_PATCHES = ("application/json-patch+json", "application/apply-patch+yaml")
# What kube-apiserver lists as accepted when a custom resource's patch is of none of its types.
_CUSTOM_PATCH_TYPES = (
    "application/json-patch+json",
    MERGE_PATCH,
    "application/apply-patch+yaml",
)


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
    if request.verb is Verb.DELETE_COLLECTION:
        return 200, _delete_collection(store, request)
    if request.verb is Verb.CREATE:
        return 201, store.create(res, _body_for(request))
    if name is None:
        raise HttpError(400, "name must be provided")
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


def _limit(query: dict[str, str]) -> int:
    """The `limit` parameter as kube-apiserver reads it: an int64; 0 or less is no limit."""
    text = query.get("limit") or "0"
    try:
        return int(text, 10)
    except ValueError:
        raise HttpError(400, f'strconv.ParseInt: parsing "{text}": invalid syntax') from None


def _list(store: MemoryStore, pager: Pager, request: ApiRequest) -> Obj:
    res, query, namespace = request.route.resource, request.query, request.route.namespace
    limit = _limit(query)
    labels = parse_equality_selector(query.get("labelSelector", ""), "labelSelector")
    fields = parse_field_selector(query.get("fieldSelector", ""))
    asked = ListQuery(str(res), namespace, bool(labels or fields))

    def select(obj: Obj) -> bool:
        meta = obj["metadata"]
        in_namespace = namespace is None or meta.get("namespace") == namespace
        chosen = all((meta.get("labels") or {}).get(k) == v for k, v in labels.items())
        return in_namespace and chosen and fields_match(obj, fields)

    if query.get("continue"):
        page = pager.next(asked, query["continue"], limit, query.get("resourceVersion", ""), select)
    elif limit > 0:
        # A page reads the whole kind: later pages may continue in another namespace (the
        # token carries no namespace), all from this one snapshot.
        everything = store.list(res)
        page = pager.first(asked, everything.items, everything.resource_version, limit, select)
    else:
        listed = store.list(res, namespace, labels)
        items = [obj for obj in listed.items if fields_match(obj, fields)]
        page = pager.first(asked, items, listed.resource_version, 0, select)
    return _list_of(res, page.items, page.resource_version, page.continue_token, page.remaining)


def _list_of(
    res: Resource,
    items: list[Obj],
    resource_version: str,
    continue_token: str | None = None,
    remaining: int | None = None,
) -> Obj:
    meta: Obj = {"resourceVersion": resource_version}
    if continue_token is not None:
        meta["continue"] = continue_token
        if remaining is not None:
            meta["remainingItemCount"] = remaining
    elif not is_built_in(res):
        # A custom resource list is unstructured: its empty continue is written out.
        meta["continue"] = ""
    return {
        "apiVersion": res.api_version,
        "kind": f"{res.kind}List",
        "metadata": meta,
        "items": items,
    }


def _delete_collection(store: MemoryStore, request: ApiRequest) -> Obj:
    """Delete what the list of the same query would list; answer the objects as deleted."""
    res, query, namespace = request.route.resource, request.query, request.route.namespace
    options = _delete_options(request)
    labels = parse_equality_selector(query.get("labelSelector", ""), "labelSelector")
    fields = parse_field_selector(query.get("fieldSelector", ""))
    listed = store.list(res, namespace, labels)
    deleted: list[Obj] = []
    for obj in listed.items:
        if not fields_match(obj, fields):
            continue
        meta = obj["metadata"]
        route = ResourceRoute(res, meta.get("namespace"), meta["name"])
        try:
            found = _delete(store, route, meta["name"], options, status=False)
        except NotFound:
            continue  # deleted meanwhile, as the real server skips it
        deleted.append(found)
    return _list_of(res, deleted, listed.resource_version)


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


def _delete(
    store: MemoryStore, route: ResourceRoute, name: str, options: Obj, *, status: bool = True
) -> Obj:
    """Delete one object: a Status of success once it is gone (`status`), else the object as it
    is left (marked for deletion while finalizers hold it)."""
    res = route.resource
    preconditions = options.get("preconditions") or {}
    if preconditions:
        meta = store.get(res, name, route.namespace)["metadata"]
        for field, title in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted = preconditions.get(field)
            if wanted is not None and wanted != meta.get(field):
                raise precondition_failed(res, name, title, wanted, str(meta.get(field)))
    result = store.delete_object(res, name, route.namespace)
    meta = result["metadata"]
    if res == NAMESPACE and not meta.get("deletionTimestamp"):
        # A Namespace always leaves as Terminating, its `kubernetes` finalizer holding it until
        # the namespace controller has deleted its content; here that finished at once.
        marked = {**meta, "deletionTimestamp": rfc3339(datetime.now(UTC))}
        return {**result, "metadata": marked, "status": {"phase": PHASE_TERMINATING}}
    if status and not meta.get("deletionTimestamp"):
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


# What Go's JSON decoder calls each JSON type it cannot read into an object.
_GO_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def _object_body(res: Resource, raw: bytes) -> Obj:
    """The body of a create or update: JSON that is an object (null reads as an empty one)."""
    try:
        value = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as error:
        raise HttpError(400, f"the request body is not valid JSON: {error}") from None
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    shown = raw[:30].hex() + (" ..." if len(raw) > 30 else "")
    raise HttpError(
        400,
        f"the object provided is unrecognized (must be of type {res.kind}): couldn't get "
        f"version/kind; json parse error: json: cannot unmarshal {_GO_JSON_TYPES[type(value)]} "
        'into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
        'Kind string "json:\\"kind,omitempty\\"" } '
        f"({shown})",
    )


def _body_for(request: ApiRequest) -> Obj:
    """The request body as an object, checked against and completed from the URL."""
    route = request.route
    res = route.resource
    body = request.decoded if request.decoded is not None else _object_body(res, request.body)
    check_type(res, body, request.body)
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise HttpError(400, "metadata must be a JSON object")
    if res.namespaced and meta.setdefault("namespace", route.namespace) != route.namespace:
        raise HttpError(
            400,
            "the namespace of the provided object does not match the namespace sent on the request",
        )
    # A create names its object in the body; a custom resource's may be POSTed to any name.
    named = route.name if request.verb is not Verb.CREATE else None
    if named is not None and meta.setdefault("name", named) != named:
        raise HttpError(
            400,
            f"the name of the object ({meta['name']}) does not match the name on the URL "
            f"({route.name})",
        )
    return body


def check_type(res: Resource, body: Obj, raw: bytes) -> None:
    """apiVersion and kind as kube-apiserver's decoders check them: a built-in kind's may be left
    out (the URL tells them); a custom resource is decoded as unstructured, which needs both."""
    version, kind = body.get("apiVersion"), body.get("kind")
    if not is_built_in(res) and not kind:
        sent = raw.decode("utf-8", "replace")
        start = sent if len(sent) <= 30 else f"{sent[:30]} ..."
        raise HttpError(
            400,
            f"the object provided is unrecognized (must be of type {res.kind}): Object 'Kind' is "
            f"missing in '{sent}' ({start})",
        )
    if version not in (None, res.api_version) or (not is_built_in(res) and version is None):
        raise HttpError(
            400,
            f"the API version in the data ({version or ''}) does not match the expected API "
            f"version ({res.api_version})",
        )
    if kind in (None, res.kind):
        return
    if is_built_in(res):
        raise HttpError(400, f'{kind} in version "{res.version}" cannot be handled as a {res.kind}')
    meta = body.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
    error = field_errors.invalid_value("kind", kind, f"must be {res.kind}")
    raise field_errors.invalid(str(kind), res.group, name, [error])


def _patch_for(request: ApiRequest) -> Obj:
    # kubectl apply patches built-in kinds strategically; without directives ($patch,
    # $setElementOrder, ...) such a patch of the kinds served here means what a merge patch means.
    strategic = request.content_type == STRATEGIC_MERGE_PATCH and is_built_in(
        request.route.resource
    )
    if request.content_type not in (MERGE_PATCH, *_UNSERVED_PATCHES) and not strategic:
        if is_built_in(request.route.resource):  # go-restful's own answer
            raise HttpError(415, "415: Unsupported Media Type", details={})
        raise HttpError(
            415,
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(_CUSTOM_PATCH_TYPES),
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
