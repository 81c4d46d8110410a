"""`bundler ui`'s server over real HTTP, in front of the test API server with RBAC: the
snapshot, one watch per kind whatever the number of pages, the event stream, actions made with
the user's credentials and refused with the API server's own message, and the CSRF guard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.core.rbac import PolicyRule
from bundler.kube.store import KubeStore
from bundler.ui.server import STATIC
from tests.support.builders import WS, bundle, cluster, placed_deployment
from tests.support.dashboards import (
    VIEWER_USER,
    EventStream,
    get_json,
    post_action,
    request,
    running_dashboard,
    viewer_kubeconfig,
    wait_until,
)
from tests.support.identities import admin_store

CLUSTER_NS = "cluster-fleet-default-p1"


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer() as running:
        yield running


@pytest.fixture
def admin(server: ApiServer, tmp_path: Path) -> Iterator[KubeStore]:
    with admin_store(server, tmp_path) as store:
        for namespace in (WS, CLUSTER_NS):
            store.create(NAMESPACE, {"metadata": {"name": namespace}})
        store.create(
            BUNDLE, bundle([{"clusterSelector": {"matchLabels": {"env": "prod"}}}]).to_wire()
        )
        store.create(CLUSTER, cluster("p1", {"env": "prod"}).to_wire())
        store.create(CLUSTER, cluster("d1", {"env": "dev"}).to_wire())
        created = placed_deployment("app", "p1", CLUSTER_NS, name="app-p1")
        store.create(BUNDLE_DEPLOYMENT, created)
        status = {"status": created["status"]}
        store.patch_status(BUNDLE_DEPLOYMENT, created["metadata"]["name"], status, CLUSTER_NS)
        yield store


def test_the_snapshot_shows_the_fleet(admin: KubeStore, server: ApiServer, tmp_path: Path) -> None:
    with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
        snapshot = wait_until(
            lambda: (s := get_json(dashboard.url, "/api/fleet"))["cells"] == [".", "7"] and s,
            "the fleet, p1 Ready",
        )
    assert snapshot["states"][7] == "Ready"
    assert [b["key"] for b in snapshot["bundles"]] == [f"{WS}/app"]
    assert [c["key"] for c in snapshot["clusters"]] == [f"{WS}/d1", f"{WS}/p1"]
    assert snapshot["errors"] == {}


def test_pages_share_one_watch_per_kind_and_hear_a_change(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
        wait_until(lambda: get_json(dashboard.url, "/api/fleet")["cells"], "the fleet")
        streams = [EventStream(dashboard.url) for _ in range(3)]
        try:
            admin.patch(CLUSTER, "d1", {"metadata": {"labels": {"env": "prod"}}}, WS)
            pending = dashboard.model.snapshot()["states"].index("Pending")
            change = [f"{WS}/app", f"{WS}/d1", pending]
            assert streams, "no streams"
            wait_until(
                lambda: all(s.heard_cell(change, f"{WS}/d1") for s in streams),
                "the new cell on every stream",
            )
            assert get_json(dashboard.url, "/api/fleet")["cells"] == [str(pending), "7"]
        finally:
            for stream in streams:
                stream.close()
        assert server.request_counts()["watch"] == 4, server.request_counts()


def test_an_action_is_made_with_the_users_credentials(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
        answer = post_action(dashboard.url, "pause", "Bundle", f"{WS}/app")
        assert answer.status == 200, answer.body
        assert admin.get(BUNDLE, "app", WS)["spec"]["paused"] is True
        detail = wait_until(
            lambda: (d := get_json(dashboard.url, f"/api/bundles/{WS}/app"))["paused"] and d,
            "the bundle paused on its page",
        )
    assert detail["name"] == "app"


def test_rbac_refuses_an_action_with_the_api_servers_message(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    with running_dashboard(viewer_kubeconfig(server, tmp_path)) as dashboard:
        answer = post_action(dashboard.url, "pause", "Cluster", f"{WS}/p1")
    assert answer.status == 403
    error = answer.json()["error"]
    assert VIEWER_USER in error and 'cannot patch resource "clusters"' in error, error
    assert admin.get(CLUSTER, "p1", WS)["spec"].get("paused") is not True


def test_a_kind_the_user_may_not_list_is_told_with_the_servers_message(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    rules = (
        PolicyRule(
            verbs=("list", "watch"),
            api_groups=("bundler.dev",),
            resources=("bundles", "clusters", "clustergroups"),
        ),
    )
    with running_dashboard(viewer_kubeconfig(server, tmp_path, rules)) as dashboard:
        errors = get_json(dashboard.url, "/api/fleet")["errors"]
        assert list(errors) == ["bundledeployments"]
        assert "cannot list resource" in errors["bundledeployments"]
        snapshot = wait_until(
            lambda: (s := get_json(dashboard.url, "/api/fleet"))["clusters"] and s, "clusters"
        )
    assert [c["name"] for c in snapshot["clusters"]] == ["d1", "p1"]


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [
        ({"X-Bundler-CSRF": ""}, 403, "CSRF token"),
        ({"X-Bundler-CSRF": "guess"}, 403, "CSRF token"),
        ({"Origin": "http://attacker.example"}, 403, "cross-origin"),
        ({"Origin": ""}, 403, "cross-origin"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 400, "application/json"),
    ],
    ids=["no-token", "wrong-token", "other-origin", "no-origin", "a-form"],
)
def test_actions_need_the_token_the_origin_and_json(
    admin: KubeStore,
    server: ApiServer,
    tmp_path: Path,
    headers: dict[str, str],
    status: int,
    says: str,
) -> None:
    with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
        answer = post_action(dashboard.url, "pause", "Bundle", f"{WS}/app", headers=headers)
    assert answer.status == status
    assert says in answer.json()["error"]
    assert admin.get(BUNDLE, "app", WS)["spec"].get("paused") is not True


def test_a_foreign_host_header_is_refused_everywhere(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    """DNS rebinding: a page of attacker.example resolved to 127.0.0.1 reads nothing."""
    with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
        port = dashboard.url.rsplit(":", 1)[1]
        foreign = {"Host": f"attacker.example:{port}"}
        answers = [request(dashboard.url, path=p, headers=foreign) for p in ("/", "/api/session")]
    assert [a.status for a in answers] == [421, 421]
    assert b"csrf" not in answers[1].body.lower()


def test_a_read_only_dashboard_refuses_actions(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    with running_dashboard(server.kubeconfig(tmp_path / "user"), read_only=True) as dashboard:
        assert get_json(dashboard.url, "/api/session")["readOnly"] is True
        answer = post_action(dashboard.url, "pause", "Bundle", f"{WS}/app")
    assert answer.status == 403
    assert "read-only" in answer.json()["error"]


def test_the_page_is_served_from_the_package_under_a_strict_policy(
    admin: KubeStore, server: ApiServer, tmp_path: Path
) -> None:
    with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
        answers = {path: request(dashboard.url, path=path) for path in STATIC}
        missing = request(dashboard.url, path="/api/bundles/nowhere/none")
    assert answers, "no static files"
    for path, answer in answers.items():
        assert answer.status == 200, path
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert b'src="/static/app.js"' in answers["/"].body
    assert missing.status == 404
