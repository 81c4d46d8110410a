"""`bundler render --manifests` of a Kustomize Bundle: each cluster's build, with the values its
postBuild.substitute rendered to, from an artifact in the local registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.oci import artifact_archive, artifacts
from bundler.oci.artifact_layout import Origin
from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions
from tests.support.cli_helpers import run_cli
from tests.support.registry_fixtures import LocalRegistry

pytestmark = pytest.mark.usefixtures("docker_config")

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: greeting
data:
  text: hello ${cluster_name} in ${region}
"""


def _world(tmp_path: Path, url: str) -> Path:
    clusters = [
        {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": name, "namespace": "fleet-default", "labels": {"region": region}},
            "spec": {},
        }
        for name, region in (("edge-1", "eu"), ("edge-2", "us"))
    ]
    bundle = {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "greeting", "namespace": "fleet-default"},
        "spec": {
            "kustomize": {
                "source": {"oci": {"url": url, "tag": "1.0.0"}},
                "targetNamespace": "apps",
                "postBuild": {
                    "substitute": {
                        "cluster_name": "${ cluster.name }",
                        "region": "${ cluster.labels.region }",
                    }
                },
            },
            "targets": [{"clusterSelector": {}}],
        },
    }
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump_all([*clusters, bundle]))
    return path


def test_each_cluster_gets_its_build(
    capsys: pytest.CaptureFixture[str], oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "greeting.yaml").write_text(CONFIGMAP)
    url = oci_registry.oci("t/render-kustomize")
    artifacts.push_artifact(
        artifact_archive.pack(tmp_path / "src"),
        parse_repository(url).tagged("1.0.0"),
        RegistryOptions(plain_http=True),
        origin=Origin(),
    )
    code, out, err = run_cli(
        capsys, "render", "-f", str(_world(tmp_path, url)), "--manifests", "-o", "json"
    )
    assert code == 0, err
    items: list[dict[str, Any]] = json.loads(out)["items"]
    built = [i for i in items if i["kind"] == "ConfigMap"]
    assert built
    by_cluster = {i["metadata"]["annotations"]["bundler.dev/cluster"]: i for i in built}
    assert by_cluster["fleet-default/edge-1"]["data"] == {"text": "hello edge-1 in eu"}
    assert by_cluster["fleet-default/edge-2"]["data"] == {"text": "hello edge-2 in us"}
    assert {i["metadata"]["namespace"] for i in built} == {"apps"}
