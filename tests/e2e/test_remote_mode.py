"""Scenario 3: remote mode, with values from ConfigMaps and Secrets on the downstream cluster.

Flux on the management cluster deploys into a cluster that runs nothing of bundler's, through the
kubeconfig `bundler cluster register --mode remote` stored. helm-controller reads `valuesFrom`
objects in the HelmRelease's own namespace on the cluster that reconciles it - the cluster
namespace on the management cluster - so the remote agent copies them there from where they live
in both modes: the agent namespace of the downstream cluster. Flux's precedence holds: inline
values win over valuesFrom.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.support.e2e.processes import wait_until
from tests.support.e2e.releases import latest_record
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 180.0


@pytest.mark.timeout(600)
def test_remote_mode_reads_values_from_the_downstream_cluster(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    edge = tenancy.env.downstream["edge-2"]
    edge.kubectl("create", "namespace", tenancy.agent_namespace)
    edge.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "app-settings", "namespace": tenancy.agent_namespace},
                "data": {"values.yaml": "greeting: from-configmap\ndb: {host: db.example}\n"},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "db-creds", "namespace": tenancy.agent_namespace},
                "data": {"password": base64.b64encode(b"s3cret").decode()},
            },
        ]
    )
    tenancy.register("edge-2", {"env": "e2e"}, remote=True)
    tenancy.start_manager()
    tenancy.start_remote_agent()
    values_from = [
        {"kind": "ConfigMap", "name": "app-settings"},
        {
            "kind": "Secret",
            "name": "db-creds",
            "valuesKey": "password",
            "targetPath": "db.password",
        },
        {"kind": "Secret", "name": "not-there", "optional": True},
    ]
    helm = {"version": "1.0.0", "values": {"greeting": "inline"}, "valuesFrom": values_from}
    tenancy.apply(tenancy.app_bundle("app", helm))
    wait_until(
        lambda: tenancy.ready_clusters("app") == "1/1",
        "Bundle app READY 1/1 through the remote agent",
        timeout=PATIENCE,
        supervisor=tenancy.env.supervisor,
    )

    record = latest_record(edge, "app", tenancy.release_namespace)
    assert record is not None and record.version == "1.0.0"
    # Flux merges valuesFrom in order, then the inline values over them.
    expected: dict[str, Any] = {
        "greeting": "inline",
        "db": {"host": "db.example", "password": "s3cret"},
    }
    assert record.values == expected, record.values
    # Nothing of bundler's downstream but the objects the user made: Flux ran on the management
    # cluster, from the cluster namespace, naming only the copies.
    assert not edge.list("helmreleases.helm.toolkit.fluxcd.io", tenancy.agent_namespace)
    namespace = tenancy.cluster_namespace("edge-2")
    release = tenancy.management.get("helmreleases.helm.toolkit.fluxcd.io", "app", namespace)
    assert release is not None
    named = [(entry["kind"], entry["name"]) for entry in release["spec"]["valuesFrom"]]
    assert named == [
        ("Secret", "app-configmap-app-settings"),
        ("Secret", "app-secret-db-creds"),
        ("Secret", "app-secret-not-there"),
    ]
    for _, name in named[:2]:
        assert tenancy.management.get("secret", name, namespace) is not None
