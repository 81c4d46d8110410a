"""Tenant isolation on the real components: a Bundle cannot have another cluster's kubeconfig
copied where an agent reads it, and the remote side copies a kubeconfig only on the manager's word
that the pull agent's identity is gone, so no pull agent token ever reads it, the manager stopped
or not."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e.deployment import bundler_cli
from tests.support.e2e.processes import wait_until
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 240.0
HELM_RELEASES = "helmreleases.helm.toolkit.fluxcd.io"
LABELS = {"env": "e2e"}


def _eventually(tenancy: Tenancy, condition: Any, what: str) -> None:
    wait_until(condition, what, timeout=PATIENCE, supervisor=tenancy.env.supervisor)


def _condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), {})


def _read_as(tenancy: Tenancy, kubeconfig: Path, secret: str, namespace: str) -> tuple[int, str]:
    """`kubectl get secret` as the identity of `kubeconfig`: exit code and what it said."""
    done = tenancy.management.kubectl(
        "get", "secret", secret, "-n", namespace, "-o", "name", kubeconfig=kubeconfig, check=False
    )
    return done.returncode, (done.stdout + done.stderr).strip()


@pytest.mark.timeout(300)
def test_a_bundle_naming_another_clusters_kubeconfig_is_refused(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    tenancy.register("edge-1", LABELS)
    tenancy.register("edge-2", {"env": "victim"}, remote=True)  # its admin kubeconfig Secret
    victim = "edge-2-kubeconfig"
    assert tenancy.management.get("secrets", victim, tenancy.workspace) is not None
    tenancy.start_manager()
    stolen = tenancy.app_bundle(
        "app",
        {"version": "1.0.0", "secretRef": {"name": victim}},
        targets=[{"clusterSelector": {"matchLabels": LABELS}}],
    )
    tenancy.apply(stolen)
    _eventually(
        tenancy,
        lambda: _condition(tenancy.bundle("app"), "Ready").get("reason") == "CredentialsRefused",
        "the Bundle refused",
    )
    ready = _condition(tenancy.bundle("app"), "Ready")
    assert ready["status"] == "False"
    assert (
        f"Secret {tenancy.workspace}/{victim} is not used as registry credentials"
        in (ready["message"])
    )
    assert "it is the kubeconfig Secret of Cluster" in ready["message"]
    assert "kubernetes.io/dockerconfigjson" in ready["message"]  # the rule
    own = tenancy.cluster_namespace("edge-1")
    assert tenancy.management.get("secrets", victim, own) is None
    assert tenancy.bundle_deployments("edge-1") == []

    identity = tenancy.workdir / "edge-1.identity.kubeconfig"
    bundler_cli(
        "agent-kubeconfig", f"--cluster={tenancy.workspace}/edge-1",
        f"--kubeconfig={tenancy.management.admin_kubeconfig}", f"--output={identity}",
    )  # fmt: skip
    code, said = _read_as(tenancy, identity, victim, own)
    assert code != 0 and "NotFound" in said, said


@pytest.mark.timeout(900)
def test_with_the_manager_stopped_no_pull_token_reads_the_kubeconfig(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    tenancy.register("edge-1", LABELS)
    manager = tenancy.start_manager()
    tenancy.start_remote_agent()
    pull_agent = tenancy.start_pull_agent("edge-1", heartbeat=3)
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0"}))
    _eventually(tenancy, lambda: tenancy.ready_clusters("app") == "1/1", "the pull release Ready")
    # What the pull agent runs with on the management cluster: its token.
    token = tenancy.workdir / "edge-1.management.kubeconfig"
    namespace, copy = tenancy.cluster_namespace("edge-1"), "edge-1-kubeconfig"

    tenancy.stop(manager)
    tenancy.register("edge-1", LABELS, remote=True)

    def agent_status() -> dict[str, Any]:
        found = tenancy.management.get("clusters.bundler.dev", "edge-1", tenancy.workspace)
        status: dict[str, Any] = ((found or {}).get("status") or {}).get("agent") or {}
        return status

    _eventually(
        tenancy,
        lambda: (
            agent_status().get("releasesHandedOver") is True
            and "waiting for the manager" in (agent_status().get("handoverPending") or "")
        ),
        "the pull agent to let go, and the remote side to wait for the manager",
    )
    for _ in range(8):  # the remote side's heartbeats pass: still nothing to read
        code, said = _read_as(tenancy, token, copy, namespace)
        assert code != 0 and "NotFound" in said, said
        time.sleep(2)

    # It let go of its releases: uninstalled, as an operator would, before its identity goes.
    tenancy.stop(pull_agent)
    tenancy.start_manager()
    _eventually(
        tenancy,
        lambda: (
            _condition(tenancy.management.get(HELM_RELEASES, "app", namespace), "Ready").get(
                "status"
            )
            == "True"
        ),
        "the remote side to adopt the release once the manager removed the pull identity",
    )
    assert tenancy.management.get("secrets", copy, namespace) is not None
    code, said = _read_as(tenancy, token, copy, namespace)
    assert code != 0 and f"secret/{copy}" not in said, said  # the old token is no more
