"""Scenario: values kept on the management cluster, delivered to both agent modes.

A ConfigMap and a Secret in the workspace, labelled for delivery, named by the Bundle's `valuesFrom`
with `source: Management`. The manager copies them into the cluster namespaces; the pull agent
writes them next to its HelmRelease downstream, where the real helm-controller reads them; the
remote-mode HelmRelease on the management cluster reads the copies where they are. Flux's
precedence holds (the entries in order, then the inline values over them). A change of the Secret
becomes a new deploymentID and a Helm upgrade on both clusters; once no deployment names the
objects any more, every copy is deleted, on both sides.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.support.e2e.releases import latest_record
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 180.0
PULL, REMOTE = "edge-1", "edge-2"
COPY_LABEL = "bundler.dev/secret-copy=management-values"


def _delivered(name: str, workspace: str, kind: str, data: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": workspace,
            "labels": {"bundler.dev/deliver": "true"},
        },
    }
    if kind == "Secret":
        body["data"] = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    else:
        body["data"] = data
    return body


@pytest.mark.timeout(900)
def test_management_values_reach_both_modes_roll_out_and_go(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    workspace = tenancy.workspace
    tenancy.management.apply(
        [
            _delivered(
                "app-settings", workspace, "ConfigMap",
                {
                    "values.yaml": "greeting: from-configmap\n"
                    "db: {host: db.example, port: 5432, password: from-configmap}\n"
                },
            ),
            _delivered("db-creds", workspace, "Secret", {"password": "s3cret"}),
        ]
    )  # fmt: skip
    tenancy.register(PULL, {"env": "e2e"})
    tenancy.register(REMOTE, {"env": "e2e"}, remote=True)
    tenancy.start_manager()
    tenancy.start_pull_agent(PULL)
    tenancy.start_remote_agent()
    values_from = [
        {"kind": "ConfigMap", "name": "app-settings", "source": "Management"},
        {
            "kind": "Secret",
            "name": "db-creds",
            "source": "Management",
            "valuesKey": "password",
            "targetPath": "db.password",
        },
        {"kind": "Secret", "name": "not-there", "source": "Management", "optional": True},
    ]
    inline = {"greeting": "inline", "db": {"port": 6543}}
    helm = {"version": "1.0.0", "values": inline, "valuesFrom": values_from}
    tenancy.apply(tenancy.app_bundle("app", helm))
    tenancy.eventually(lambda: tenancy.ready_clusters("app") == "2/2", "Bundle app READY 2/2")

    def values_of(cluster: str) -> dict[str, Any]:
        record = latest_record(tenancy.env.downstream[cluster], "app", tenancy.release_namespace)
        return {} if record is None else record.values

    # Flux merges valuesFrom in order (the Secret's password over the ConfigMap's), then the
    # inline values over them (inline wins: port, greeting).
    expected: dict[str, Any] = {
        "greeting": "inline",
        "db": {"host": "db.example", "port": 6543, "password": "s3cret"},
    }
    for cluster in (PULL, REMOTE):
        assert values_of(cluster) == expected, (cluster, values_of(cluster))

    def copies(cluster: str) -> set[str]:
        found = tenancy.management.list(
            "secrets", tenancy.cluster_namespace(cluster), f"--selector={COPY_LABEL}"
        )
        return {secret["metadata"]["name"] for secret in found}

    def downstream_copies() -> set[str]:
        found = tenancy.env.downstream[PULL].list(
            "secrets", tenancy.agent_namespace, "--selector=bundler.dev/bundledeployment=app"
        )
        return {s["metadata"]["name"] for s in found if "-mgmt-" in s["metadata"]["name"]}

    first = copies(PULL)
    assert len(first) == 2 and copies(REMOTE) == first
    assert downstream_copies() == first
    release = tenancy.management.get(
        "helmreleases.helm.toolkit.fluxcd.io", "app", tenancy.cluster_namespace(REMOTE)
    )
    assert release is not None
    assert {entry["name"] for entry in release["spec"]["valuesFrom"]} == first

    # A change of the Secret rolls out like any values change: a Helm upgrade on both clusters.
    tenancy.management.apply([_delivered("db-creds", workspace, "Secret", {"password": "rotated"})])
    rotated = {**expected, "db": {**expected["db"], "password": "rotated"}}
    tenancy.eventually(
        lambda: all(values_of(c) == rotated for c in (PULL, REMOTE)),
        "both releases upgraded with the rotated password",
    )
    tenancy.eventually(lambda: tenancy.ready_clusters("app") == "2/2", "READY 2/2 again")
    # The ConfigMap's copy stays; the Secret's is replaced by one named for the new data.
    (old_secret,) = {name for name in first if "-mgmt-secret-" in name}
    tenancy.eventually(
        lambda: (
            len(copies(PULL)) == 2
            and copies(PULL) & first == first - {old_secret}
            and downstream_copies() == copies(PULL)
        ),
        "the old Secret copy gone, the new one downstream",
    )
    second = copies(PULL)
    assert copies(REMOTE) == second

    # No longer named: every copy goes, in the cluster namespaces and downstream.
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0", "values": inline}))
    tenancy.eventually(
        lambda: not copies(PULL) and not copies(REMOTE) and not downstream_copies(),
        "every copy deleted once no deployment names it",
    )
    tenancy.eventually(
        lambda: all(
            values_of(c) == {"greeting": "inline", "db": {"port": 6543}} for c in (PULL, REMOTE)
        ),
        "both releases without the management values",
    )
    # The workspace's own objects are never touched.
    assert tenancy.management.get("secret", "db-creds", workspace) is not None
    assert tenancy.management.get("configmap", "app-settings", workspace) is not None
