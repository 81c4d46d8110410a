"""Scenario 7: a Cluster API cluster imported, gated until its control plane is initialized, then
deployed to through its kubeconfig Secret.

The upstream Cluster API CRD is installed on the real API server; the Cluster's status is written
through the status subresource, as Cluster API's controllers write it.
"""

from __future__ import annotations

import base64
import json

import pytest

from bundler.core.labels import IMPORT_ENABLED, LABEL_IMPORT
from tests.support.capi.capi_objects import Version, capi_cluster
from tests.support.e2e.processes import wait_until
from tests.support.e2e.releases import latest_record
from tests.support.e2e.tenancy import Tenancy
from tests.support.schemas import SCHEMAS_DIR

PATIENCE = 180.0
CAPI_CRD = SCHEMAS_DIR / "capi" / "clusters.yaml"
CAPI_CLUSTERS = "clusters.cluster.x-k8s.io"


@pytest.mark.timeout(600)
def test_a_capi_cluster_is_imported_gated_then_deployed_to(tenancy: Tenancy) -> None:
    management, edge = tenancy.management, tenancy.env.downstream["edge-1"]
    management.install_crds(CAPI_CRD)
    tenancy.publish("1.0.0")
    workspace = tenancy.workspace
    management.kubectl("label", "namespace", workspace, f"{LABEL_IMPORT}={IMPORT_ENABLED}")
    cluster = capi_cluster("workload-1", Version.V1BETA2, namespace=workspace,
                           labels={"env": "e2e"}, imported=False)  # fmt: skip
    management.apply(cluster)
    kubeconfig = edge.admin_kubeconfig.read_bytes()
    management.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "workload-1-kubeconfig",
                "namespace": workspace,
                "labels": {"cluster.x-k8s.io/cluster-name": "workload-1"},
            },
            "type": "cluster.x-k8s.io/secret",
            "data": {"value": base64.b64encode(kubeconfig).decode()},
        }
    )
    _set_initialized(tenancy, False)
    tenancy.start_manager()
    tenancy.start_remote_agent()
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0"}))

    def eventually(condition: object, what: str) -> object:
        return wait_until(condition, what, timeout=PATIENCE, supervisor=tenancy.env.supervisor)  # type: ignore[arg-type]

    imported = eventually(
        lambda: management.get("clusters.bundler.dev", "workload-1", workspace),
        "the import of workload-1",
    )
    assert isinstance(imported, dict)
    (owner,) = imported["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("Cluster", "workload-1")
    assert imported["spec"]["kubeConfigSecret"] == "workload-1-kubeconfig"
    assert imported["spec"]["agentMode"] == "remote"
    gate = eventually(
        lambda: imported_gate(tenancy), "the import to say it waits for the control plane"
    )
    assert gate == "ControlPlaneNotInitialized"
    assert latest_record(edge, "app", tenancy.release_namespace) is None
    assert not tenancy.bundle_deployments("workload-1")

    _set_initialized(tenancy, True)
    eventually(lambda: tenancy.ready_clusters("app") == "1/1", "Bundle app READY 1/1")
    record = latest_record(edge, "app", tenancy.release_namespace)
    assert record is not None and record.version == "1.0.0"


def imported_gate(tenancy: Tenancy) -> str | None:
    found = tenancy.management.get("clusters.bundler.dev", "workload-1", tenancy.workspace) or {}
    annotations = found.get("metadata", {}).get("annotations") or {}
    gate: str | None = annotations.get("bundler.dev/import-gate")
    return gate


def _set_initialized(tenancy: Tenancy, initialized: bool) -> None:
    status = {"initialization": {"infrastructureProvisioned": True,
                                 "controlPlaneInitialized": initialized}}  # fmt: skip
    tenancy.management.kubectl(
        "patch", CAPI_CLUSTERS, "workload-1", "-n", tenancy.workspace, "--subresource=status",
        "--type=merge", "-p", json.dumps({"status": status}),
    )  # fmt: skip
