"""Kustomize delivery on the real components: a Bundle of manifests from an OCI artifact pushed with
`bundler artifact push` (its version a range the manager resolves) and one from a Git repository
served on loopback (smart HTTP) reach two pull-mode clusters, each with its own `${cluster_name}`
substituted by kustomize-controller from the Bundle's templated `postBuild.substitute`; a new
artifact version rolls out, and deleting a Bundle prunes what it applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e.artifacts import push_manifests
from tests.support.e2e.tenancy import Tenancy
from tests.support.git_server import GitServer

CLUSTERS = {"edge-1": {"region": "eu"}, "edge-2": {"region": "us"}}
PATIENCE = 240.0
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  cluster: ${{cluster_name}}
  region: ${{region}}
  release: "{release}"
"""
KUSTOMIZATION = "resources: [configmap.yaml]\n"
SUBSTITUTE = {"cluster_name": "${ cluster.name }", "region": "${ cluster.labels.region }"}


def _manifests(directory: Path, name: str, release: str) -> Path:
    directory.mkdir(parents=True)
    (directory / "kustomization.yaml").write_text(KUSTOMIZATION)
    (directory / "configmap.yaml").write_text(CONFIGMAP.format(name=name, release=release))
    return directory


def _bundle(tenancy: Tenancy, name: str, source: dict[str, Any]) -> dict[str, Any]:
    kustomize = {
        "source": source,
        "path": "./",
        "postBuild": {"substitute": SUBSTITUTE},
        "pollInterval": "5s",
        "interval": "1m",
        "timeout": "1m",
    }
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": tenancy.workspace},
        "spec": {
            "kustomize": kustomize,
            "namespace": tenancy.release_namespace,
            "targets": [{"clusterSelector": {}}],
        },
    }


@pytest.mark.timeout(1200)
def test_kustomize_bundles_from_an_artifact_and_a_git_repository_reach_two_clusters(
    tenancy: Tenancy, git_server: GitServer
) -> None:
    env = tenancy.env
    namespace = tenancy.release_namespace
    for cluster, labels in CLUSTERS.items():
        env.kustomize_controller(cluster)
        env.downstream[cluster].kubectl("create", "namespace", namespace, check=False)
        tenancy.register(cluster, labels)
    repository = env.registry.oci(f"{tenancy.workspace}/manifests")
    push_manifests(
        _manifests(tenancy.workdir / "v1", "from-artifact", "1.0.0"), f"{repository}:1.0.0"
    )
    git_server.create(
        "manifests",
        {
            "kustomization.yaml": KUSTOMIZATION,
            "configmap.yaml": CONFIGMAP.format(name="from-git", release="main"),
        },
    )
    tenancy.start_manager(f"--plain-http-registry={env.registry.host}")
    for cluster in CLUSTERS:
        tenancy.start_pull_agent(cluster)
    oci = {"oci": {"url": repository, "version": "1.*", "insecure": True}}
    git = {"git": {"url": git_server.url("manifests"), "ref": {"branch": "main"}}}
    tenancy.apply(_bundle(tenancy, "artifact", oci), _bundle(tenancy, "git", git))

    def data(cluster: str, name: str) -> dict[str, str] | None:
        found = env.downstream[cluster].get("configmap", name, namespace)
        return None if found is None else found.get("data")

    def each_cluster_has(name: str, release: str) -> bool:
        return all(
            data(cluster, name)
            == {"cluster": cluster, "region": labels["region"], "release": release}
            for cluster, labels in CLUSTERS.items()
        )

    tenancy.eventually(
        lambda: each_cluster_has("from-artifact", "1.0.0") and each_cluster_has("from-git", "main"),
        "both Bundles' ConfigMaps on both clusters, substituted per cluster",
        timeout=PATIENCE,
    )
    tenancy.eventually(
        lambda: (
            tenancy.ready_clusters("artifact") == "2/2" and tenancy.ready_clusters("git") == "2/2"
        ),
        "both Bundles READY 2/2",
        timeout=PATIENCE,
    )
    bundle = tenancy.bundle("artifact")
    assert bundle is not None and bundle["status"]["resolvedVersion"] == "1.0.0"
    for bd in tenancy.bundle_deployments("edge-1"):
        release = bd["status"]["release"]
        assert release["appliedRevision"].split("@")[0] in ("1.0.0", "main")

    # A newly pushed artifact version rolls out (the range is resolved again every pollInterval).
    push_manifests(
        _manifests(tenancy.workdir / "v2", "from-artifact", "1.1.0"), f"{repository}:1.1.0"
    )
    tenancy.eventually(
        lambda: each_cluster_has("from-artifact", "1.1.0"),
        "the new artifact version on both clusters",
        timeout=PATIENCE,
    )

    # Deleting a Bundle prunes what its Kustomizations applied; the other Bundle stays.
    tenancy.management.kubectl(
        "delete", "bundles.bundler.dev", "artifact", "-n", tenancy.workspace, "--wait=false"
    )
    tenancy.eventually(
        lambda: all(data(cluster, "from-artifact") is None for cluster in CLUSTERS),
        "the deleted Bundle's ConfigMaps pruned from both clusters",
        timeout=PATIENCE,
    )
    assert each_cluster_has("from-git", "main")
    assert tenancy.forbidden() == []
