"""Cluster API Cluster objects for the tests, in either served version, each one checked against the
upstream CRD schema (tests/data/schemas/capi/clusters.yaml) as it is built."""

from __future__ import annotations

import copy
from enum import StrEnum
from typing import Any

from bundler.api.resources import CAPI_CLUSTER, CAPI_CLUSTER_V1BETA1, Resource
from bundler.core.labels import IMPORT_ENABLED, LABEL_IMPORT
from tests.support.schemas import validate

WS = "capi-ws"
FAKE_KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n"


class Version(StrEnum):
    V1BETA2 = "v1beta2"
    V1BETA1 = "v1beta1"

    @property
    def resource(self) -> Resource:
        return CAPI_CLUSTER if self is Version.V1BETA2 else CAPI_CLUSTER_V1BETA1


def capi_cluster(
    name: str,
    version: Version = Version.V1BETA2,
    *,
    namespace: str = WS,
    labels: dict[str, str] | None = None,
    pods: list[str] | None = None,
    cluster_class: str | None = None,
    initialized: bool | None = None,
    imported: bool = True,
    **metadata: Any,
) -> dict[str, Any]:
    """A schema-valid CAPI Cluster. `initialized` None leaves status out (a new cluster)."""
    all_labels = {**({LABEL_IMPORT: IMPORT_ENABLED} if imported else {}), **(labels or {})}
    spec: dict[str, Any] = {
        "clusterNetwork": {
            "pods": {"cidrBlocks": pods or ["192.168.0.0/16"]},
            "services": {"cidrBlocks": ["10.128.0.0/12"]},
        }
    }
    if cluster_class is not None:
        spec["topology"] = _topology(version, cluster_class)
    else:
        spec.update(_refs(version, name))
    obj: dict[str, Any] = {
        "apiVersion": f"cluster.x-k8s.io/{version.value}",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, "labels": all_labels, **metadata},
        "spec": spec,
    }
    if initialized is not None:
        obj["status"] = control_plane_status(version, initialized)
    validate(obj)
    return obj


def control_plane_status(version: Version, initialized: bool) -> dict[str, Any]:
    if version is Version.V1BETA1:
        return {
            "controlPlaneReady": initialized,
            "infrastructureReady": True,
            "phase": "Provisioned",
        }
    return {
        "initialization": {
            "infrastructureProvisioned": True,
            "controlPlaneInitialized": initialized,
        },
        "phase": "Provisioned" if initialized else "Provisioning",
    }


def with_status(obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """A copy of `obj` with `status`, checked against the schema."""
    updated = copy.deepcopy(obj)
    updated["status"] = status
    validate(updated)
    return updated


def kubeconfig_secret(cluster: str, namespace: str = WS) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": f"{cluster}-kubeconfig",
            "namespace": namespace,
            "labels": {"cluster.x-k8s.io/cluster-name": cluster},
        },
        "type": "cluster.x-k8s.io/secret",
        "stringData": {"value": FAKE_KUBECONFIG},
    }


def _topology(version: Version, cluster_class: str) -> dict[str, Any]:
    if version is Version.V1BETA1:
        return {"class": cluster_class, "version": "v1.30.6"}
    return {"classRef": {"name": cluster_class}, "version": "v1.31.2"}


def _refs(version: Version, name: str) -> dict[str, Any]:
    if version is Version.V1BETA1:
        return {
            "controlPlaneRef": {
                "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                "kind": "KubeadmControlPlane",
                "name": f"{name}-control-plane",
            }
        }
    return {
        "controlPlaneRef": {
            "apiGroup": "controlplane.cluster.x-k8s.io",
            "kind": "KubeadmControlPlane",
            "name": f"{name}-control-plane",
        }
    }
