"""What a request must pass before it reaches the store, in kube-apiserver's order.

Authorization of the request (bundler.apiserver.rbac), before its body is read (the handler reads
it then, within kube-apiserver's limit: bundler.apiserver.bodies), then for writes: the
`fieldValidation` parameter, and checks on the object the write would store - the body, or for a
patch the stored object with the patch applied:
- for a kind with a schema (bundler.apiserver.crd_schemas), the object is first decoded as
  kube-apiserver decodes custom resources: duplicate and unknown fields answered as
  `fieldValidation` asks (bundler.apiserver.field_validation), then pruned and defaulted
  (bundler.apiserver.decoding); then it is validated as the custom resource strategy does - on
  create without status, on update with the stored status, a status write its status alone
  (bundler.apiserver.schema_validation) - together with the metadata rules, in one 422;
- for other kinds, the metadata rules (bundler.apiserver.limits);
then the etcd size limit and RBAC's escalation checks (bundler.apiserver.escalation).

What admission decoded is what the verb stores (`ApiRequest.decoded`). A patch of a custom resource
is stored as an update of its result, made against the resourceVersion it was applied to: if the
object changed meanwhile, the caller admits the patch again on the new object (`Admitted.guarded`),
as the API server's GuaranteedUpdate does; a write naming a stale resourceVersion gets the store's
409 before any validation, as there. A body that does not parse, or a write of an object that does
not exist, is left for the verb to answer as it always has.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from bundler.api.resources import Verb
from bundler.apiserver import field_validation
from bundler.apiserver.attributes import path_attributes, request_attributes
from bundler.apiserver.authn import UserInfo
from bundler.apiserver.crd_schemas import CustomResourceSchemas
from bundler.apiserver.decoding import decode, from_storage
from bundler.apiserver.escalation import check_grant
from bundler.apiserver.field_errors import FieldError, invalid
from bundler.apiserver.field_validation import Directive
from bundler.apiserver.go_values import go_json
from bundler.apiserver.limits import (
    check_metadata,
    check_stored_size,
    metadata_errors,
    object_name,
)
from bundler.apiserver.rbac import Authorizer
from bundler.apiserver.response_warnings import Warnings
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.schema_validation import validate
from bundler.apiserver.structural import MISSING, Structural
from bundler.apiserver.verbs import MERGE_PATCH, ApiRequest, check_type
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.mergepatch import json_copy, merge_patch
from bundler.store.protocol import Obj

_WRITES = frozenset({Verb.CREATE, Verb.UPDATE, Verb.PATCH})


@dataclass(frozen=True)
class Admitted:
    """The request to run, and whether a conflict on it means: admit the request again."""

    request: ApiRequest
    guarded: bool = False


def authorize_path(
    authorizer: Authorizer, user: UserInfo, method: str, path: str, query: dict[str, str]
) -> None:
    """Authorize a request no served kind routes: discovery, or a kind that is not served."""
    authorizer.authorize(path_attributes(user, method, path, query))


def authorize_request(
    authorizer: Authorizer, user: UserInfo, route: ResourceRoute, verb: Verb, query: dict[str, str]
) -> None:
    """Authorize a request to a served kind, as kube-apiserver's filter does: before the body."""
    authorizer.authorize(request_attributes(user, verb, route, query))


def admit(
    store: MemoryStore,
    authorizer: Authorizer,
    schemas: CustomResourceSchemas,
    user: UserInfo,
    request: ApiRequest,
    warnings: Warnings,
) -> Admitted:
    """The authorized request as it may run, or raise the HttpError kube-apiserver would answer
    it with.

    Warnings the request earns (unknown fields with `fieldValidation=Warn`) go to `warnings`.
    """
    route, verb, body = request.route, request.verb, request.body
    if verb not in _WRITES:
        return Admitted(request)
    directive = field_validation.directive(verb, request.query)
    old = _current(store, route) if verb is not Verb.CREATE else None
    if verb is not Verb.CREATE and old is None:
        return Admitted(request)
    schema = schemas.of(route.resource)
    if schema is not None:
        return _admit_custom(authorizer, user, request, schema, directive, old, warnings)
    new = _result(verb, body, old)
    if new is None:
        return Admitted(request)
    if not route.status:
        check_metadata(route.resource, new, creating=verb is Verb.CREATE)
    check_stored_size(new)
    if not route.status:
        check_grant(authorizer, user, route.resource, _placed(new, route), old)
    return Admitted(request)


def _admit_custom(
    authorizer: Authorizer,
    user: UserInfo,
    request: ApiRequest,
    schema: Structural,
    directive: Directive,
    old: Obj | None,
    warnings: Warnings,
) -> Admitted:
    route, verb = request.route, request.verb
    if verb is Verb.PATCH and request.content_type != MERGE_PATCH:
        return Admitted(request)
    parsed = field_validation.parse(request.body, directive)
    if parsed is None or not isinstance(parsed.value, dict):
        return Admitted(request)
    if verb is not Verb.PATCH:
        # Decoding comes first: a body that is no object of the kind goes no further.
        check_type(route.resource, parsed.value, request.body)
    stored = from_storage(json_copy(old), schema) if old is not None else None
    written: Obj = merge_patch(stored, parsed.value) if verb is Verb.PATCH else parsed.value
    # The patch handler quotes the patched object as it was before decoding.
    patched = go_json(written) if verb is Verb.PATCH and directive is Directive.STRICT else ""
    unknown = decode(written, schema)
    field_validation.enforce(directive, verb, route.resource, parsed, unknown, patched, warnings)
    if _stale(written, stored):
        return Admitted(request)  # the store's 409 comes before validation, as in GuaranteedUpdate
    checked = _validated(route, verb, schema, written, stored)
    check_stored_size(checked)
    if not route.status:
        check_grant(authorizer, user, route.resource, _placed(checked, route), old)
    guarded = verb is Verb.PATCH and not _names_version(parsed.value)
    return Admitted(dataclasses.replace(request, decoded=written), guarded)


def _validated(
    route: ResourceRoute, verb: Verb, schema: Structural, written: Obj, stored: Obj | None
) -> Obj:
    """The object the write would leave, once validated as the custom resource strategy does."""
    res = route.resource
    errors: list[FieldError] = []
    if route.status and stored is not None:
        result = {key: value for key, value in stored.items() if key != "status"}
        status_schema = schema.properties.get("status")
        if "status" in written:
            result["status"] = written["status"]
            if status_schema is not None:
                old_status = stored.get("status", MISSING)
                errors = validate(written["status"], status_schema, old=old_status, under="status")
    else:
        result = dict(written)
        if res.status_subresource:
            result.pop("status", None)
            if stored is not None and "status" in stored:
                result["status"] = stored["status"]
        placed = _placed(result, route)
        errors = metadata_errors(res, placed, creating=verb is Verb.CREATE)
        errors += validate(placed, schema, old=stored if stored is not None else MISSING)
    if errors:
        raise invalid(res.kind, res.group, object_name(result) or route.name or "", errors)
    return result


def _stale(written: Obj, stored: Obj | None) -> bool:
    """Whether the write names a resourceVersion other than the stored object's."""
    meta = written.get("metadata")
    wanted = meta.get("resourceVersion") if isinstance(meta, dict) else None
    if stored is None or wanted in (None, ""):
        return False
    return bool(str(wanted) != stored["metadata"].get("resourceVersion"))


def _names_version(patch: dict[str, Any]) -> bool:
    meta = patch.get("metadata")
    return isinstance(meta, dict) and meta.get("resourceVersion") not in (None, "")


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
