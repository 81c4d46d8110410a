"""Generates the bundler.dev CustomResourceDefinitions (apiextensions.k8s.io/v1) from the models.

pydantic's JSON schema is turned into a structural OpenAPI v3 schema: references inlined, optional
(`X | None`) collapsed to `X`, titles and defaults dropped, int-or-string and preserve-unknown-
fields kept only where the models ask for them (IntOrPercent, FreeForm).

Descriptions (what `kubectl explain` shows) come from the models (bundler.api.base: a model's
docstring, the docstring under each field) and are kept at every level: a field's own description
wins over the one of the model or enum it refers to, through `$ref`, `allOf` and `X | None` alike,
and a docstring's lines are joined into one paragraph. The one exception is the root `metadata`,
which a CRD may not describe (the API server rejects anything there but `type`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from bundler.api.bootstrap import BootstrapConfig
from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.resources import (
    BOOTSTRAP_CONFIG,
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_GROUP,
    GROUP,
    VERSION,
    Resource,
)

# Keywords a structural schema may carry; the rest of what pydantic emits (titles, defaults) goes.
_KEEP: tuple[str, ...] = (
    "type",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "maxItems",
    "minItems",
    "required",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
)


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    json_path: str
    type: str = "string"


@dataclass(frozen=True)
class CrdSpec:
    resource: Resource
    model: type[BaseModel]
    short_names: tuple[str, ...]
    columns: tuple[PrinterColumn, ...]


CRDS = (
    CrdSpec(
        BUNDLE,
        Bundle,
        ("bdl",),
        (
            PrinterColumn("Ready", ".status.display.readyClusters"),
            PrinterColumn("State", ".status.display.state"),
            PrinterColumn("Version", ".status.display.version"),
            PrinterColumn("Gate", ".status.display.gate"),
        ),
    ),
    CrdSpec(
        CLUSTER,
        Cluster,
        ("bcl",),
        (
            PrinterColumn("Bundles-Ready", ".status.display.readyBundles"),
            PrinterColumn("State", ".status.display.state"),
            PrinterColumn("Last-Seen", ".status.agent.lastSeen", "date"),
        ),
    ),
    CrdSpec(
        CLUSTER_GROUP,
        ClusterGroup,
        ("bcg",),
        (
            PrinterColumn("Clusters", ".status.clusterCount", "integer"),
            PrinterColumn("Non-Ready", ".status.nonReadyClusterCount", "integer"),
            PrinterColumn("State", ".status.display.state"),
        ),
    ),
    CrdSpec(
        BUNDLE_DEPLOYMENT,
        BundleDeployment,
        ("bdp",),
        (
            PrinterColumn("Deployment-ID", ".spec.deploymentID"),
            PrinterColumn("Applied", ".status.appliedDeploymentID"),
            PrinterColumn("Ready", ".status.ready", "boolean"),
        ),
    ),
    CrdSpec(
        BOOTSTRAP_CONFIG,
        BootstrapConfig,
        ("bbc",),
        (PrinterColumn("Mode", ".spec.mode"),),
    ),
)


def _paragraphs(text: str) -> str:
    """A docstring as a description: the lines of each paragraph joined by single spaces."""
    blocks = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(block.split()) for block in blocks)


def _described(out: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`out` with the description `node` carries (a field's, winning over its type's), first."""
    description = node.get("description")
    if not description:
        return out
    rest = {k: v for k, v in out.items() if k != "description"}
    return {"description": _paragraphs(description), **rest}


def _structural(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        return _described(_structural(defs[node["$ref"].rsplit("/", 1)[-1]], defs), node)
    # Older pydantic wraps a reference that has siblings (a description) as `allOf: [{$ref}]`.
    if "allOf" in node:
        if len(node["allOf"]) != 1:
            raise ValueError(f"allOf with several schemas cannot be structural: {node}")
        return _described(_structural(node["allOf"][0], defs), node)
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            return _described(_structural(options[0], defs), node)
        raise ValueError(f"union without an int-or-string marker cannot be structural: {node}")
    out = _described({k: node[k] for k in _KEEP if k in node}, node)
    if "const" in node:
        out["type"] = "string"
    if "properties" in node:
        out["properties"] = {k: _structural(v, defs) for k, v in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _structural(node["additionalProperties"], defs)
    if "items" in node:
        out["items"] = _structural(node["items"], defs)
    return out


def openapi_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True)
    defs = raw.get("$defs", {})
    props = {k: _structural(v, defs) for k, v in raw["properties"].items()}
    # Nothing but the type: a description here is "metadata is implicitly specified" to the API
    # server (structural schemas restrict the root metadata to name and generateName).
    props["metadata"] = {"type": "object"}
    # What the model requires, and no more: a Cluster may be written without a spec.
    required = [name for name in raw.get("required", ()) if name != "metadata"]
    root = {"type": "object", "properties": props, **({"required": required} if required else {})}
    return _described(root, raw)


def crd(spec: CrdSpec) -> dict[str, Any]:
    res = spec.resource
    columns = [{"name": c.name, "type": c.type, "jsonPath": c.json_path} for c in spec.columns]
    columns.append({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{res.plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": res.kind,
                "listKind": f"{res.kind}List",
                "plural": res.plural,
                "singular": res.kind.lower(),
                "shortNames": list(spec.short_names),
                "categories": ["bundler"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                    "schema": {"openAPIV3Schema": openapi_schema(spec.model)},
                }
            ],
        },
    }


def all_crds() -> dict[str, dict[str, Any]]:
    """File name -> CRD document, for every bundler kind."""
    return {f"{GROUP}_{s.resource.plural}.yaml": crd(s) for s in CRDS}
