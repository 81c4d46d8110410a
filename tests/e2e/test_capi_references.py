"""The ControlPlane of an imported Cluster API cluster in templates (CAAPH's `.ControlPlane`), on
the real API server: a KubeadmControlPlane kind served by a CRD, read by the manager under exactly
its chart's RBAC, becomes `cluster.values.ControlPlane`, and a Bundle templated from it deploys its
value."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.core.labels import IMPORT_ENABLED, LABEL_IMPORT
from tests.support.capi.capi_objects import Version, capi_cluster
from tests.support.e2e.releases import latest_record
from tests.support.e2e.tenancy import Tenancy
from tests.support.schemas import SCHEMAS_DIR

PATIENCE = 180.0
CAPI_CRD = SCHEMAS_DIR / "capi" / "clusters.yaml"
CLUSTER = "workload-2"
# A stand-in for the kubeadm control plane provider's CRD: the kind, served, without its schema.
KCP_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"},
    "spec": {
        "group": "controlplane.cluster.x-k8s.io",
        "names": {
            "kind": "KubeadmControlPlane",
            "listKind": "KubeadmControlPlaneList",
            "plural": "kubeadmcontrolplanes",
            "singular": "kubeadmcontrolplane",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1beta2",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


@pytest.mark.timeout(600)
def test_templates_read_the_control_plane_of_an_imported_cluster(
    tenancy: Tenancy, tmp_path: Path
) -> None:
    management, edge = tenancy.management, tenancy.env.downstream["edge-2"]
    crd = tmp_path / "kcp.yaml"
    crd.write_text(yaml.safe_dump(KCP_CRD))
    management.install_crds(CAPI_CRD, crd)
    tenancy.publish("1.0.0")
    workspace = tenancy.workspace
    management.kubectl("label", "namespace", workspace, f"{LABEL_IMPORT}={IMPORT_ENABLED}")
    management.apply(
        {
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "kind": "KubeadmControlPlane",
            "metadata": {"name": f"{CLUSTER}-control-plane", "namespace": workspace},
            "spec": {"replicas": 3, "version": "v1.31.2"},
        }
    )
    management.apply(capi_cluster(CLUSTER, Version.V1BETA2, namespace=workspace, imported=False))
    kubeconfig = base64.b64encode(edge.admin_kubeconfig.read_bytes()).decode()
    management.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{CLUSTER}-kubeconfig", "namespace": workspace},
            "type": "cluster.x-k8s.io/secret",
            "data": {"value": kubeconfig},
        }
    )
    status = {"initialization": {"infrastructureProvisioned": True,
                                 "controlPlaneInitialized": True}}  # fmt: skip
    management.kubectl(
        "patch", "clusters.cluster.x-k8s.io", CLUSTER, "-n", workspace, "--subresource=status",
        "--type=merge", "-p", json.dumps({"status": status}),
    )  # fmt: skip
    tenancy.start_manager()
    tenancy.start_remote_agent()
    values = {
        "replicas": "${ cluster.values.ControlPlane.spec.replicas }",
        "controlPlaneGroup": "${ cluster.values.Cluster.spec.controlPlaneRef.apiGroup }",
    }
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0", "values": values}))

    def control_plane() -> dict[str, Any] | None:
        found = management.get("clusters.bundler.dev", CLUSTER, workspace) or {}
        seen: dict[str, Any] | None = (
            (found.get("spec") or {}).get("values", {}).get("ControlPlane")
        )
        return seen

    seen = tenancy.eventually(control_plane, "values.ControlPlane on the imported Cluster")
    assert (seen["kind"], seen["spec"]["replicas"]) == ("KubeadmControlPlane", 3)
    assert "status" not in seen and "uid" not in seen["metadata"]
    tenancy.eventually(lambda: tenancy.ready_clusters("app") == "1/1", "Bundle app READY 1/1")
    record = latest_record(edge, "app", tenancy.release_namespace)
    assert record is not None
    assert record.values == {"replicas": 3, "controlPlaneGroup": "controlplane.cluster.x-k8s.io"}
