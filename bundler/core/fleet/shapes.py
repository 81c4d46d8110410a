"""The types of a fleet.yaml's and a GitRepo's fields, checked before anything reads them: a field
of the wrong type is an input error naming FILE:LINE and the field (Fleet refuses such a file
too), never a crash further on. Unknown fields are not checked here: they are reported as not
converted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bundler.core.fleet.notes import Located
from bundler.errors import InvalidInputError

_WORDS: dict[type, str] = {
    dict: "a mapping",
    list: "a list",
    str: "a string",
    bool: "true or false",
    int: "an integer",
}
_CRITERIA: dict[str, type] = {
    "name": str,
    "clusterName": str,
    "clusterGroup": str,
    "clusterSelector": dict,
    "clusterGroupSelector": dict,
    "doNotDeploy": bool,
}
HELM: dict[str, type] = {
    "chart": str,
    "repo": str,
    "version": str,
    "releaseName": str,
    "values": dict,
    "valuesFiles": list,
    "valuesFrom": list,
    "templateValues": dict,
    "force": bool,
    "atomic": bool,
    "takeOwnership": bool,
    "timeoutSeconds": int,
    "maxHistory": int,
    "skipSchemaValidation": bool,
    "disablePreProcess": bool,
    "waitForJobs": bool,
    "disableDNS": bool,
    "disableDependencyUpdate": bool,
}
_OPTIONS: dict[str, type] = {
    "namespace": str,
    "defaultNamespace": str,
    "helm": dict,
    "diff": dict,
    "correctDrift": dict,
    "keepResources": bool,
    "serviceAccount": str,
}
FLEET_YAML: dict[str, type] = {
    **_OPTIONS,
    "name": str,
    "labels": dict,
    "targetCustomizations": list,
    "targets": list,
    "overrideTargets": list,
    "targetCustomizationMode": str,
    "paused": bool,
    "rolloutStrategy": dict,
    "dependsOn": list,
}
TARGET: dict[str, type] = {**_CRITERIA, **_OPTIONS}


def check(located: Located, mapping: Any, path: str, shapes: Mapping[str, type]) -> None:
    """InvalidInputError for a field of `mapping` (at `path`) whose type is not its shape's;
    null counts as unset."""
    if not isinstance(mapping, Mapping):
        raise InvalidInputError(
            f"must be {_WORDS[dict]}", obj=located.at(path or None), field=path or None
        )
    for key, kind in shapes.items():
        value = mapping.get(key)
        if value is None:
            continue
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            field = f"{path}.{key}" if path else key
            hint = " (quote it)" if kind is str and isinstance(value, int | float | bool) else ""
            raise InvalidInputError(
                f"must be {_WORDS[kind]}{hint}", obj=located.at(field), field=field
            )


def check_list(located: Located, items: Any, path: str, shapes: Mapping[str, type]) -> None:
    """`check` for each item of the list at `path`."""
    for index, item in enumerate(items or []):
        check(located, item, f"{path}[{index}]", shapes)


def check_fleet_yaml(located: Located) -> None:
    """The fleet.yaml's fields Fleet reads, of the types Fleet reads them as."""
    body = located.body
    check(located, body, "", FLEET_YAML)
    check(located, body.get("helm") or {}, "helm", HELM)
    for key in ("targetCustomizations", "targets", "overrideTargets"):
        check_list(located, body.get(key), key, TARGET)
        for index, item in enumerate(body.get(key) or []):
            check(located, item.get("helm") or {}, f"{key}[{index}].helm", HELM)
    check_list(located, body.get("dependsOn"), "dependsOn", {"name": str, "selector": dict})
