"""`bundler ui` against the real kube-apiserver, over HTTP: the event stream tells a label
change as a cell of the matrix, and with a tenant's own credentials (a Role in the workspace
that reads bundler's kinds) an action is refused with the API server's message, as is the
list of BundleDeployments across cluster namespaces the tenant may not read."""

from __future__ import annotations

from typing import Any

from tests.support.dashboards import (
    EventStream,
    get_json,
    post_action,
    running_dashboard,
    wait_until,
)
from tests.support.e2e.tenancy import Tenancy

VIEWER = "ui-viewer"


def _bundle(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name},
        "spec": {
            "helm": {"repo": "oci://127.0.0.1:1/charts", "chart": "app", "version": "1.0.0"},
            "targets": [{"clusterSelector": {"matchLabels": labels}}],
        },
    }


def _cluster(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
    }


def _viewer_role(workspace: str) -> list[dict[str, Any]]:
    rules = [
        {
            "apiGroups": ["bundler.dev"],
            "resources": ["bundles", "clusters", "clustergroups"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": VIEWER, "namespace": workspace},
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": VIEWER, "namespace": workspace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": VIEWER},
            "subjects": [{"kind": "ServiceAccount", "name": VIEWER, "namespace": workspace}],
        },
    ]


def test_the_event_stream_tells_a_label_change(tenancy: Tenancy) -> None:
    workspace = tenancy.workspace
    tenancy.apply(_bundle("app", {"env": "prod"}), _cluster("c1", {"env": "dev"}))
    admin = tenancy.management.admin_kubeconfig
    with running_dashboard(admin, namespaces=[workspace]) as dashboard:
        snapshot = wait_until(
            lambda: (s := get_json(dashboard.url, "/api/fleet"))["clusters"] and s, "c1"
        )
        assert snapshot["cells"] == ["."]
        assert snapshot["errors"] == {}
        stream = EventStream(dashboard.url)
        try:
            tenancy.management.kubectl(
                "label", "clusters.bundler.dev", "c1", "env=prod", "--overwrite",
                "-n", workspace,
            )  # fmt: skip
            pending = snapshot["states"].index("Pending")
            change = [f"{workspace}/app", f"{workspace}/c1", pending]
            wait_until(lambda: stream.heard_cell(change, f"{workspace}/c1"), "the new cell")
        finally:
            stream.close()
        assert get_json(dashboard.url, "/api/fleet")["cells"] == [str(pending)]


def test_a_tenant_is_refused_with_the_api_servers_message(tenancy: Tenancy) -> None:
    workspace = tenancy.workspace
    management = tenancy.management
    tenancy.apply(_bundle("app", {"env": "prod"}), _cluster("c1", {"env": "prod"}))
    kubeconfig = management.service_account_kubeconfig(VIEWER, workspace)
    management.apply(_viewer_role(workspace))
    user = f"system:serviceaccount:{workspace}:{VIEWER}"
    with running_dashboard(kubeconfig, namespaces=[workspace]) as dashboard:
        snapshot = wait_until(
            lambda: (s := get_json(dashboard.url, "/api/fleet"))["bundles"] and s, "the bundle"
        )
        refused_list = snapshot["errors"]["bundledeployments"]
        assert user in refused_list and "cannot list resource" in refused_list, refused_list
        answer = post_action(dashboard.url, "pause", "Bundle", f"{workspace}/app")
    assert answer.status == 403, answer.body
    error = answer.json()["error"]
    assert user in error and 'cannot patch resource "bundles"' in error, error
    bundle = tenancy.bundle("app")
    assert bundle is not None and not bundle["spec"].get("paused")
