"""The objects a CAPI Cluster refers to (CAAPH's .ControlPlane and .InfraCluster) in templates:
read by the importer as the manager (exactly its RBAC), bounded in size, and offline as render reads
its inputs; and one form (v1beta2's) for both Cluster versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.resources import ALL_KINDS, CLUSTER, SECRET, Resource
from bundler.core.capi_import import (
    CAPI_VALUE_MAX_BYTES,
    CapiReference,
    capi_references,
    capi_values,
    unified,
)
from bundler.core.rbac import CAPI_REFERENCE_RULES
from tests.support.capi.capi_objects import WS, Version, capi_cluster, kubeconfig_secret
from tests.support.capi.fleet import MakeFleet, create_capi
from tests.support.cli_helpers import run_cli
from tests.support.manager.rbac_rules import without

(CONTROL_PLANES,) = [r for r in CAPI_REFERENCE_RULES if "kubeadmcontrolplanes" in r.resources]
KCP = Resource(
    "controlplane.cluster.x-k8s.io", "v1beta2", "KubeadmControlPlane", "kubeadmcontrolplanes"
)


def control_plane(name: str, version: str = "v1beta2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"controlplane.cluster.x-k8s.io/{version}",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": name, "namespace": WS, "uid": "kcp-uid", "resourceVersion": "9"},
        "spec": {"replicas": 3, "version": "v1.31.2", **spec},
        "status": {"readyReplicas": 1},
    }


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (Version.V1BETA2, CapiReference("ControlPlane", "controlplane.cluster.x-k8s.io", None,
                                        "KubeadmControlPlane", "eu-1-control-plane", WS)),
        (Version.V1BETA1, CapiReference("ControlPlane", "controlplane.cluster.x-k8s.io",
                                        "v1beta1", "KubeadmControlPlane", "eu-1-control-plane",
                                        WS)),
    ],
    ids=["v1beta2-names-the-group", "v1beta1-names-the-version"],
)  # fmt: skip
def test_the_references_of_a_capi_cluster(version: Version, expected: CapiReference) -> None:
    assert capi_references(capi_cluster("eu-1", version)) == (expected,)
    assert capi_references(capi_cluster("eu-1", version, cluster_class="quick-start")) == ()


@pytest.mark.parametrize("version", list(Version), ids=[v.value for v in Version])
def test_both_cluster_versions_read_through_the_v1beta2_spelling(version: Version) -> None:
    with_class = unified(capi_cluster("eu-1", version, cluster_class="quick-start"))
    assert with_class["spec"]["topology"]["classRef"]["name"] == "quick-start"
    refs = unified(capi_cluster("eu-1", version))["spec"]["controlPlaneRef"]
    assert (refs["apiGroup"], refs["kind"]) == (
        "controlplane.cluster.x-k8s.io",
        "KubeadmControlPlane",
    )


def test_each_object_is_sanitized_and_bounded() -> None:
    capi = capi_cluster("eu-1")
    values, omitted = capi_values(capi, {"ControlPlane": control_plane("eu-1-control-plane")})
    assert (sorted(values), omitted) == (["Cluster", "ControlPlane"], [])
    assert "status" not in values["ControlPlane"]
    assert "uid" not in values["ControlPlane"]["metadata"]
    huge = control_plane("eu-1-control-plane", blob="x" * CAPI_VALUE_MAX_BYTES)
    values, omitted = capi_values(capi, {"ControlPlane": huge, "InfraCluster": control_plane("i")})
    assert (sorted(values), omitted) == (["Cluster", "InfraCluster"], ["ControlPlane"])


def test_the_importer_reads_the_control_plane_with_the_managers_rules(
    make_fleet: MakeFleet,
) -> None:
    fleet = make_fleet(resources=(*ALL_KINDS, KCP))
    fleet.store.create(KCP, control_plane("eu-1-control-plane"))
    create_capi(fleet, capi_cluster("eu-1", initialized=True))
    fleet.store.create(SECRET, kubeconfig_secret("eu-1"))
    cluster = fleet.wait_until(
        CLUSTER, "eu-1", lambda c: "ControlPlane" in c["spec"]["values"], "values.ControlPlane"
    )
    seen = cluster["spec"]["values"]["ControlPlane"]
    assert (seen["kind"], seen["spec"]["replicas"], "status" in seen) == (
        "KubeadmControlPlane", 3, False
    )  # fmt: skip
    assert fleet.server.denials() == []


def test_without_the_reference_rule_the_importer_is_refused(make_fleet: MakeFleet) -> None:
    fleet = make_fleet(resources=(*ALL_KINDS, KCP), rules=without(CONTROL_PLANES))
    fleet.store.create(KCP, control_plane("eu-1-control-plane"))
    create_capi(fleet, capi_cluster("eu-1", initialized=True))
    fleet.eventually(lambda: fleet.server.denials(), "a refused read of the control plane")
    cluster = fleet.wait_for(CLUSTER, "eu-1")
    assert "ControlPlane" not in cluster["spec"]["values"]  # imported all the same


def test_render_reads_the_control_plane_among_its_inputs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bundle = {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": "app", "namespace": WS},
        "spec": {
            "helm": {
                "repo": "https://charts.example.com",
                "chart": "app",
                "version": "1.0.0",
                "values": {
                    "replicas": "${ cluster.values.ControlPlane.spec.replicas }",
                    "group": "${ cluster.values.Cluster.spec.controlPlaneRef.apiGroup }",
                },
            },
            "targets": [{"clusterSelector": {}}],
        },
    }
    docs = [
        capi_cluster("eu-1", Version.V1BETA1, initialized=True),
        kubeconfig_secret("eu-1"),
        control_plane("eu-1-control-plane", "v1beta1"),
        bundle,
    ]
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(docs))
    code, out, err = run_cli(capsys, "render", "-f", str(tmp_path), "-o", "json")
    assert code == 0, err
    (bd,) = json.loads(out)["items"]
    assert bd["spec"]["options"]["helm"]["values"] == {
        "replicas": 3,
        "group": "controlplane.cluster.x-k8s.io",
    }
