from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bundler.api.crdgen import all_crds

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
