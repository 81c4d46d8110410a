"""The Kustomize toolchain on real Flux, before bundler delivers with it: a directory pushed with
`bundler artifact push` is read by source-controller's OCIRepository and applied by
kustomize-controller (built from its Go module like the other controllers), and an object removed
from the next artifact is pruned.

The OCIRepository and the Kustomization are written by hand here, as a user of Flux writes them,
and checked against the upstream CRDs first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.e2e.artifacts import push_manifests
from tests.support.e2e.tenancy import Tenancy
from tests.support.schemas import validate

CLUSTER = "edge-1"
PATIENCE = 180.0
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {namespace}
data:
  greeting: {greeting}
"""


def _manifests(directory: Path, namespace: str, names: dict[str, str]) -> Path:
    directory.mkdir(parents=True)
    for name, greeting in names.items():
        text = CONFIGMAP.format(name=name, namespace=namespace, greeting=greeting)
        (directory / f"{name}.yaml").write_text(text)
    return directory


def _flux_objects(namespace: str, url: str, tag: str) -> list[dict[str, Any]]:
    source = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": "manifests", "namespace": namespace},
        "spec": {"url": url, "ref": {"tag": tag}, "insecure": True, "interval": "10m"},
    }
    kustomization = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "manifests", "namespace": namespace},
        "spec": {
            "sourceRef": {"kind": "OCIRepository", "name": "manifests"},
            "path": "./",
            "prune": True,
            "interval": "10m",
            "timeout": "1m",
        },
    }
    for obj in (source, kustomization):
        validate(obj)
    return [source, kustomization]


def test_an_artifact_pushed_by_bundler_is_applied_and_pruned_by_kustomize_controller(
    tenancy: Tenancy,
) -> None:
    env = tenancy.env
    cluster = env.downstream[CLUSTER]
    env.kustomize_controller(CLUSTER)
    namespace = tenancy.release_namespace
    cluster.kubectl("create", "namespace", namespace)
    repository = env.registry.oci(f"{tenancy.workspace}/manifests")
    first = {"toolchain-kept": "hello", "toolchain-removed": "bye"}
    push_manifests(_manifests(tenancy.workdir / "v1", namespace, first), f"{repository}:v1")
    cluster.apply(_flux_objects(namespace, repository, "v1"))

    def data(name: str) -> dict[str, str] | None:
        found = cluster.get("configmap", name, namespace)
        return None if found is None else found.get("data")

    def kustomization() -> str:
        return str(
            cluster.get("kustomizations.kustomize.toolkit.fluxcd.io", "manifests", namespace)
        )

    tenancy.eventually(
        lambda: all(data(name) == {"greeting": text} for name, text in first.items()),
        "kustomize-controller to apply the pushed ConfigMaps",
        timeout=PATIENCE,
        detail=kustomization,
    )

    second = {"toolchain-kept": "hello again"}
    push_manifests(_manifests(tenancy.workdir / "v2", namespace, second), f"{repository}:v2")
    cluster.apply(_flux_objects(namespace, repository, "v2"))
    tenancy.eventually(
        lambda: (
            data("toolchain-kept") == {"greeting": "hello again"}
            and cluster.get("configmap", "toolchain-removed", namespace) is None
        ),
        "kustomize-controller to update the kept ConfigMap and prune the removed one",
        timeout=PATIENCE,
        detail=kustomization,
    )
    applied = cluster.get("kustomizations.kustomize.toolkit.fluxcd.io", "manifests", namespace)
    assert applied is not None
    conditions = {c["type"]: c for c in applied["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "True", conditions
    assert applied["status"]["lastAppliedRevision"].startswith("v2@sha256:")
