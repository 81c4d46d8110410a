"""The OpenAPI v3 documents kubectl reads: `/openapi/v3` and one per group-version.

The root lists every served group-version with its document's URL and, as kube-apiserver does,
a `hash` of its content (kubectl caches documents by that URL). A group-version's document has:
- for each kind, its PATCH operation with the `fieldValidation` parameter, which tells `kubectl
  apply` that the server validates fields itself (so kubectl neither validates on the client nor
  needs `--validate=false`); custom resources are then patched with JSON merge patches;
- for bundler's kinds, their schemas as kube-apiserver publishes a CRD's: the CRD's
  openAPIV3Schema (bundler.api.crdgen, descriptions included) under
  `dev.bundler.v1alpha1.<Kind>`, with the standard `apiVersion`, `kind` and `metadata` (a
  reference to ObjectMeta), `anyOf: [integer, string]` beside `x-kubernetes-int-or-string`, the
  `x-kubernetes-group-version-kind` kubectl finds a kind by, and a `<Kind>List`; with the
  metadata schemas they refer to (bundler.apiserver.openapi_meta). So `kubectl explain
  bundles.spec.targets` works against `bundler dev`.
Built-in, Flux and Cluster API kinds have no schemas here; `/openapi/v2` stays absent.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from bundler.api.crdgen import CRDS, crd
from bundler.api.resources import Resource
from bundler.apiserver.openapi_meta import META_SCHEMAS, STANDARD_FIELDS
from bundler.store.protocol import Obj

_ROOT = "/openapi/v3"
_FIELD_VALIDATION: Obj = {
    "name": "fieldValidation",
    "in": "query",
    "description": "Ignore, Warn or Strict: what to do with unknown or duplicate fields",
    "schema": {"type": "string", "uniqueItems": True},
}
_INT_OR_STRING: list[Obj] = [{"type": "integer"}, {"type": "string"}]


def is_openapi_path(path: str) -> bool:
    return path == _ROOT or path.startswith(_ROOT + "/")


def openapi_document(path: str, served: Iterable[Resource]) -> Obj | None:
    """The root listing or one group-version's document at `path`, None for anything else."""
    documents = _documents(tuple(served))
    if path == _ROOT:
        return {
            "paths": {
                gv: {"serverRelativeURL": f"{_ROOT}/{gv}?hash={digest}"}
                for gv, (_, digest) in sorted(documents.items())
            }
        }
    found = documents.get(path.removeprefix(_ROOT + "/"))
    return None if found is None else json.loads(found[0])


@functools.lru_cache(maxsize=8)
def _documents(served: tuple[Resource, ...]) -> dict[str, tuple[str, str]]:
    """Every group-version's document as JSON, with its hash (kube-apiserver's: SHA-512)."""
    by_path: dict[str, list[Resource]] = {}
    for res in served:
        by_path.setdefault(_group_version_path(res), []).append(res)
    documents = {}
    for gv, kinds in by_path.items():
        text = json.dumps(_document(kinds), separators=(",", ":"), sort_keys=True)
        documents[gv] = (text, hashlib.sha512(text.encode()).hexdigest().upper())
    return documents


def _document(kinds: list[Resource]) -> Obj:
    schemas: dict[str, Obj] = {}
    for res in kinds:
        source = _crd_schemas().get(res)
        if source is not None:
            schemas.update(_kind_schemas(res, source))
    if schemas:
        schemas.update(copy.deepcopy(META_SCHEMAS))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": dict(_object_path(res) for res in kinds),
        "components": {"schemas": schemas},
    }


@functools.cache
def _crd_schemas() -> dict[Resource, Obj]:
    """The openAPIV3Schema of each bundler kind, as in the CRDs of crds/."""
    return {
        spec.resource: crd(spec)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        for spec in CRDS
    }


def schema_name(res: Resource) -> str:
    """kube-apiserver's name of a custom resource's schema: the group reversed, then version
    and kind (`dev.bundler.v1alpha1.Bundle`)."""
    return ".".join([*reversed(res.group.split(".")), res.version, res.kind])


def _kind_schemas(res: Resource, source: Obj) -> dict[str, Obj]:
    name = schema_name(res)
    properties = {
        key: _with_int_or_string(value)
        for key, value in (source.get("properties") or {}).items()
        if key not in ("apiVersion", "kind", "metadata")
    }
    kind: Obj = {
        **({"description": source["description"]} if "description" in source else {}),
        "type": "object",
        **({"required": list(source["required"])} if source.get("required") else {}),
        "properties": {
            "apiVersion": STANDARD_FIELDS["apiVersion"],
            "kind": STANDARD_FIELDS["kind"],
            "metadata": STANDARD_FIELDS["metadata"],
            **properties,
        },
        "x-kubernetes-group-version-kind": [_gvk(res, res.kind)],
    }
    listed: Obj = {
        "description": f"{res.kind}List is a list of {res.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": STANDARD_FIELDS["apiVersion"],
            "items": {
                "description": f"List of {res.plural}. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                "api-conventions.md",
                "type": "array",
                "items": {"$ref": f"#/components/schemas/{name}"},
            },
            "kind": STANDARD_FIELDS["kind"],
            "metadata": STANDARD_FIELDS["listMetadata"],
        },
        "x-kubernetes-group-version-kind": [_gvk(res, f"{res.kind}List")],
    }
    return {name: copy.deepcopy(kind), f"{name}List": copy.deepcopy(listed)}


def _gvk(res: Resource, kind: str) -> Obj:
    return {"group": res.group, "kind": kind, "version": res.version}


def _with_int_or_string(node: Any) -> Any:
    """A schema as kube-apiserver publishes it: int-or-string nodes also say `anyOf`."""
    if isinstance(node, list):
        return [_with_int_or_string(item) for item in node]
    if not isinstance(node, dict):
        return node
    published = {key: _with_int_or_string(value) for key, value in node.items()}
    if node.get("x-kubernetes-int-or-string") is True and "anyOf" not in node:
        published["anyOf"] = copy.deepcopy(_INT_OR_STRING)
    return published


def _group_version_path(res: Resource) -> str:
    return f"apis/{res.group}/{res.version}" if res.group else f"api/{res.version}"


def _object_path(res: Resource) -> tuple[str, Obj]:
    scope = "/namespaces/{namespace}" if res.namespaced else ""
    path = f"/{_group_version_path(res)}{scope}/{res.plural}/{{name}}"
    patch: Obj = {
        "operationId": f"patch{res.kind}",
        "parameters": [_FIELD_VALIDATION],
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": _gvk(res, res.kind),
    }
    if res in _crd_schemas():
        reference = {"schema": {"$ref": f"#/components/schemas/{schema_name(res)}"}}
        patch["responses"] = {
            "200": {"description": "OK", "content": {"application/json": reference}}
        }
    return path, {"patch": patch}
