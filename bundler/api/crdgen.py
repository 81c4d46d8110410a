"""Generates the bundler.dev CustomResourceDefinitions (apiextensions.k8s.io/v1) from the models.

pydantic's JSON schema is turned into a structural OpenAPI v3 schema: references inlined, optional
(`X | None`) collapsed to `X`, titles and defaults dropped, int-or-string and preserve-unknown-
fields kept only where the models ask for them (IntOrPercent, FreeForm).
"""

from __future__ import annotations

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
            PrinterColumn("Version", ".status.resolvedVersion"),
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


def _structural(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        return _structural(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            return _structural(options[0], defs)
        raise ValueError(f"union without an int-or-string marker cannot be structural: {node}")
    out = {k: node[k] for k in _KEEP if k in node}
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
    props["metadata"] = {"type": "object"}
    # What the model requires, and no more: a Cluster may be written without a spec.
    required = [name for name in raw.get("required", ()) if name != "metadata"]
    return {"type": "object", "properties": props, **({"required": required} if required else {})}


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
