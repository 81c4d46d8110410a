"""Rendering the charts in charts/ with Helm's own engine (helm-python-sdk: Helm's Go SDK).

`render(chart, values)` is `helm template` offline: the chart's values.schema.json is enforced,
the templates run, and the objects come back parsed, CRDs (Helm installs crds/ first) included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

helm = pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's Go SDK) is not installed")

ROOT = Path(__file__).resolve().parents[3]
MANAGER_CHART = ROOT / "charts" / "bundler"
AGENT_CHART = ROOT / "charts" / "bundler-agent"
RELEASE = "bundler"
NAMESPACE = "bundler-system"
CLUSTER_REF = "fleet-default/prod-eu-1"

# What `bundler agent-kubeconfig --helm-values` provides; the agent chart has no default for it.
AGENT_REQUIRED: dict[str, Any] = {
    "cluster": CLUSTER_REF,
    "management": {
        "server": "https://management.example:6443",
        "caData": "Q0EK",
        "token": "agent-token",
        "namespace": "cluster-fleet-default-prod-eu-1-0a1b2c",
    },
}

Obj = dict[str, Any]


def render(
    chart: Path,
    values: Obj | None = None,
    *,
    crds: bool = False,
    name: str = RELEASE,
    namespace: str = NAMESPACE,
) -> list[Obj]:
    """The objects the chart renders with `values` (and its CRDs when asked)."""
    with helm.Chart.load(chart) as loaded:
        manifests = loaded.render(values=values or {}, name=name, namespace=namespace)
        texts = [manifests[name] for name in sorted(manifests)]
        if crds:
            texts = [crd["data"] for crd in loaded.crds] + texts
    return [doc for text in texts for doc in yaml.safe_load_all(text) if doc]


def schema_errors(chart: Path, values: Obj) -> str | None:
    """Helm's verdict on `values` against the chart's values.schema.json (None: accepted)."""
    with helm.Chart.load(chart) as loaded:
        try:
            loaded.validate_schema(values)
        except helm.HelmValuesError as err:
            return str(err)
    return None


def of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [obj for obj in objects if obj["kind"] == kind]


def containers(objects: list[Obj]) -> dict[str, Obj]:
    """The container of every Deployment, by container name (each Deployment runs one)."""
    found = {}
    for deployment in of_kind(objects, "Deployment"):
        (main,) = deployment["spec"]["template"]["spec"]["containers"]
        found[main["name"]] = dict(main)
    return found


def deployment(objects: list[Obj], container_name: str) -> Obj:
    """The Deployment running the container `container_name`."""
    (found,) = [
        d
        for d in of_kind(objects, "Deployment")
        if d["spec"]["template"]["spec"]["containers"][0]["name"] == container_name
    ]
    return found
