"""Scenario 6: least privilege under the real authorizer.

bundler's processes never meet a 403 (the tenancy fixture checks every test's bundler logs); here
the real API server refuses a pull agent's identity what it must not do: another cluster
namespace, listing Secrets, other namespaces downstream.
"""

from __future__ import annotations

import pytest

from tests.support.e2e.deployment import bundler_cli
from tests.support.e2e.processes import wait_until
from tests.support.e2e.tenancy import Tenancy

PATIENCE = 120.0


def _refused(done_stderr: str) -> bool:
    return "Forbidden" in done_stderr or "forbidden" in done_stderr


@pytest.mark.timeout(300)
def test_an_agent_identity_sees_only_its_cluster_namespace(tenancy: Tenancy) -> None:
    tenancy.publish("1.0.0")
    for cluster in ("edge-1", "edge-2"):
        tenancy.register(cluster, {"env": "e2e"})
    tenancy.start_manager()
    tenancy.start_pull_agent("edge-1")
    tenancy.apply(tenancy.app_bundle("app", {"version": "1.0.0"}))
    wait_until(
        lambda: tenancy.bundle_deployments("edge-2"),
        "edge-2's BundleDeployment",
        timeout=PATIENCE,
        supervisor=tenancy.env.supervisor,
    )
    management = tenancy.management
    kubeconfig = tenancy.workdir / "edge-1.identity.kubeconfig"
    bundler_cli(
        "agent-kubeconfig", f"--cluster={tenancy.workspace}/edge-1",
        f"--kubeconfig={management.admin_kubeconfig}", f"--output={kubeconfig}",
    )  # fmt: skip
    own, other = tenancy.cluster_namespace("edge-1"), tenancy.cluster_namespace("edge-2")

    def as_agent(*args: str) -> tuple[int, str]:
        done = management.kubectl(*args, kubeconfig=kubeconfig, check=False)
        return done.returncode, done.stderr

    assert as_agent("get", "bundledeployments.bundler.dev", "-n", own)[0] == 0
    refusals: list[tuple[str, ...]] = [
        ("get", "bundledeployments.bundler.dev", "-n", other),
        ("get", "secrets", "-n", own),
        ("get", "secrets", "-n", other),
        ("get", "bundles.bundler.dev", "-n", tenancy.workspace),
        ("get", "clusters.bundler.dev", "edge-2", "-n", tenancy.workspace),
    ]
    for refused in refusals:
        code, stderr = as_agent(*refused)
        assert code != 0 and _refused(stderr), f"{refused} was not refused: {stderr}"

    # Downstream, the agent's ServiceAccount is confined to its namespace.
    edge = tenancy.env.downstream["edge-1"]
    agent_kubeconfig = tenancy.agent_kubeconfigs["edge-1"]
    downstream_refusals: list[tuple[str, ...]] = [
        ("get", "secrets", "-n", "kube-system"),
        ("get", "helmreleases.helm.toolkit.fluxcd.io", "-A"),
        ("create", "namespace", "not-for-agents"),
    ]
    for refused in downstream_refusals:
        done = edge.kubectl(*refused, kubeconfig=agent_kubeconfig, check=False)
        assert done.returncode != 0 and _refused(done.stderr), f"{refused}: {done.stderr}"
