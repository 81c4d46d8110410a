from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.crdgen import all_crds
from bundler.api.meta import CONDITION_REASON_PATTERN, CONDITION_TYPE_PATTERN, Condition

CRD_DIR = Path(__file__).parents[2] / "crds"


@pytest.mark.parametrize("name", sorted(all_crds()), ids=sorted(all_crds()))
def test_crds_dir_is_up_to_date(name: str) -> None:
    path = CRD_DIR / name
    assert path.exists(), f"{path} is missing: run `make crds`"
    assert yaml.safe_load(path.read_text()) == all_crds()[name], f"{path} is stale: run `make crds`"


def _walk(node: object, path: str = "") -> list[tuple[str, dict[str, object]]]:
    found: list[tuple[str, dict[str, object]]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for k, v in node.items():
            found.extend(_walk(v, f"{path}.{k}"))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found.extend(_walk(v, f"{path}[{i}]"))
    return found


@pytest.mark.parametrize("name", sorted(all_crds()), ids=sorted(all_crds()))
def test_schemas_are_structural(name: str) -> None:
    schema = all_crds()[name]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for path, node in _walk(schema):
        assert "$ref" not in node and "anyOf" not in node and "allOf" not in node, path
        if node.get("x-kubernetes-preserve-unknown-fields"):
            assert path.endswith((".values", ".properties.values")), (
                f"free-form outside values: {path}"
            )


def test_bundle_crd_has_status_subresource_and_printer_columns() -> None:
    version = all_crds()["bundler.dev_bundles.yaml"]["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    paths = [c["jsonPath"] for c in version["additionalPrinterColumns"]]
    assert ".status.display.readyClusters" in paths and ".status.display.state" in paths


def test_cluster_crd_shows_ready_bundles_and_last_seen() -> None:
    version = all_crds()["bundler.dev_clusters.yaml"]["spec"]["versions"][0]
    paths = [c["jsonPath"] for c in version["additionalPrinterColumns"]]
    assert ".status.display.readyBundles" in paths and ".status.agent.lastSeen" in paths


def _status_schema(name: str) -> dict[str, Any]:
    version = all_crds()[name]["spec"]["versions"][0]
    status: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["status"]
    properties: dict[str, Any] = status["properties"]
    return properties


# metav1.Condition's bounds, as Kubernetes' and Cluster API's CRDs carry them.
CONDITION_BOUNDS: dict[str, dict[str, object]] = {
    "type": {"maxLength": 316, "pattern": CONDITION_TYPE_PATTERN},
    "reason": {"maxLength": 1024, "pattern": CONDITION_REASON_PATTERN},
    "message": {"maxLength": 32768},
}


@pytest.mark.parametrize("name", sorted(all_crds()), ids=sorted(all_crds()))
def test_conditions_carry_kubernetes_bounds(name: str) -> None:
    conditions = _status_schema(name)["conditions"]
    assert conditions["maxItems"] == 32
    fields = conditions["items"]["properties"]
    for field, bounds in CONDITION_BOUNDS.items():
        assert {k: fields[field].get(k) for k in bounds} == bounds, field


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("bundler.dev_bundles.yaml", "nonReady"),
        ("bundler.dev_clusters.yaml", "nonReadyBundles"),
        ("bundler.dev_clustergroups.yaml", "nonReadyClusters"),
    ],
    ids=["bundle-non-ready", "cluster-non-ready-bundles", "group-non-ready-clusters"],
)
def test_status_lists_are_bounded(name: str, field: str) -> None:
    listed = _status_schema(name)[field]
    assert listed["maxItems"] == 10
    item = listed["items"]
    message = item["properties"]["message"] if item["type"] == "object" else item
    assert message["maxLength"] <= 32768


def test_a_condition_stored_with_an_empty_reason_still_parses() -> None:
    assert Condition.model_validate({"type": "Ready", "status": "True", "reason": ""}).reason == ""
