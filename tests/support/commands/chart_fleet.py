"""Inputs for the `--manifests` tests: Clusters and Bundles whose charts are served from a
loopback Helm repository or the local registry, and fixtures serving them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.helm_repository import HelmRepository, serve_helm_repository

WORKSPACE = "ws"
KUBE_VERSION = "v1.29.4"


def cluster(name: str, labels: dict[str, str], kube_version: str | None = None) -> dict[str, Any]:
    """A Cluster; `kube_version` is carried as an imported Cluster API cluster carries it."""
    values = (
        {}
        if kube_version is None
        else {"Cluster": {"spec": {"topology": {"version": kube_version}}}}
    )
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": WORKSPACE, "labels": labels},
        "spec": {"values": values},
    }


def bundle(
    name: str,
    repo: str,
    chart: str,
    version: str,
    values: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    helm: dict[str, Any] = {"repo": repo, "chart": chart, "version": version}
    if values is not None:
        helm["values"] = values
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": WORKSPACE},
        "spec": {
            "helm": helm,
            "namespace": "apps",
            "targets": [{"clusterSelector": {}}],
            **spec,
        },
    }


def write_fleet(path: Path, *docs: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


@pytest.fixture
def helm_repo(tmp_path: Path) -> Iterator[HelmRepository]:
    with serve_helm_repository(tmp_path / "helm-repo") as repo:
        yield repo
