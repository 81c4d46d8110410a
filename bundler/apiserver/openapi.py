"""The OpenAPI v3 documents kubectl reads before it writes: `/openapi/v3` and one per group-version.

They carry no schemas, only each kind's PATCH operation with its `fieldValidation` parameter,
which tells `kubectl apply` that the server validates fields itself (so kubectl neither validates
on the client nor needs `--validate=false`). Without schemas kubectl patches custom resources with
JSON merge patches, as it does against a real cluster. `/openapi/v2` stays absent.
"""

from __future__ import annotations

from collections.abc import Iterable

from bundler.api.resources import Resource
from bundler.store.protocol import Obj

_ROOT = "/openapi/v3"
_FIELD_VALIDATION: Obj = {
    "name": "fieldValidation",
    "in": "query",
    "description": "Ignore, Warn or Strict: what to do with unknown or duplicate fields",
    "schema": {"type": "string", "uniqueItems": True},
}


def is_openapi_path(path: str) -> bool:
    return path == _ROOT or path.startswith(_ROOT + "/")


def openapi_document(path: str, served: Iterable[Resource]) -> Obj | None:
    """The root listing or one group-version's document at `path`, None for anything else."""
    by_path: dict[str, list[Resource]] = {}
    for res in served:
        by_path.setdefault(_group_version_path(res), []).append(res)
    if path == _ROOT:
        return {"paths": {gv: {"serverRelativeURL": f"{_ROOT}/{gv}"} for gv in sorted(by_path)}}
    kinds = by_path.get(path.removeprefix(_ROOT + "/"))
    if kinds is None:
        return None
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": dict(_object_path(res) for res in kinds),
        "components": {"schemas": {}},
    }


def _group_version_path(res: Resource) -> str:
    return f"apis/{res.group}/{res.version}" if res.group else f"api/{res.version}"


def _object_path(res: Resource) -> tuple[str, Obj]:
    scope = "/namespaces/{namespace}" if res.namespaced else ""
    path = f"/{_group_version_path(res)}{scope}/{res.plural}/{{name}}"
    patch = {
        "operationId": f"patch{res.kind}",
        "parameters": [_FIELD_VALIDATION],
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {
            "group": res.group,
            "version": res.version,
            "kind": res.kind,
        },
    }
    return path, {"patch": patch}
