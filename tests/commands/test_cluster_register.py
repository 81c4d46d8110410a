"""`bundler cluster register` over real HTTP against the test API server, and the pull-mode path
to a running agent: register, a manager under the chart's RBAC sets up the identity,
`bundler agent-kubeconfig --helm-values` gives the agent chart's values, Helm renders the chart, and
the kubeconfig in the rendered Secret lets the agent list its BundleDeployments."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, SECRET
from bundler.apiserver import ApiServer
from bundler.core.cluster_registration import MANAGED_BY_REGISTER
from bundler.core.labels import LABEL_MANAGED_BY
from bundler.core.naming import cluster_namespace
from bundler.core.rbac import PolicyRule
from bundler.kube.store import KubeStore
from bundler.manager.app import start_manager
from bundler.manager.options import ManagerOptions
from bundler.store.errors import NotFound
from tests.support.builders import WS, bundle
from tests.support.charts.rendering import AGENT_CHART, MANAGER_CHART, deployment, of_kind, render
from tests.support.cli_helpers import CliResult, run_cli
from tests.support.commands.api_waits import WAIT, exists, wait_until
from tests.support.identities import manager_kubeconfig
from tests.support.management_server import management_fixture, server_fixture  # noqa: F401

DOWNSTREAM = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "edge", "cluster": {"server": "https://edge.example:6443"}}],
    "users": [{"name": "admin", "user": {"token": "downstream-token"}}],
    "contexts": [{"name": "edge", "context": {"cluster": "edge", "user": "admin"}}],
    "current-context": "edge",
}


def write_kubeconfig(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document))
    return path


def register(capsys: pytest.CaptureFixture[str], management: Path, *args: str) -> CliResult:
    return run_cli(capsys, "cluster", "register", *args, "--management-kubeconfig", str(management))


def test_remote_mode_writes_the_cluster_and_its_kubeconfig_secret(
    server: ApiServer, management: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "edge.kubeconfig", DOWNSTREAM)
    result = register(
        capsys,
        management,
        "edge",
        "--mode",
        "remote",
        "--kubeconfig",
        str(kubeconfig),
        "--label",
        "env=prod",
        "--label",
        "region=eu",
    )
    assert result.code == 0, result.stderr
    assert f"Cluster {WS}/edge created (remote mode)" in result.stderr
    cluster = server.store.get(CLUSTER, "edge", WS)
    assert cluster["metadata"]["labels"] == {"env": "prod", "region": "eu"}
    assert cluster["spec"]["agentMode"] == "remote"
    assert cluster["spec"]["kubeConfigSecret"] == "edge-kubeconfig"
    secret = server.store.get(SECRET, "edge-kubeconfig", WS)
    assert base64.b64decode(secret["data"]["value"]) == kubeconfig.read_bytes()
    assert secret["metadata"]["labels"] == {LABEL_MANAGED_BY: MANAGED_BY_REGISTER}
    assert "downstream-token" not in result.stdout + result.stderr


def test_registering_again_updates_labels_and_kubeconfig_and_keeps_the_rest(
    server: ApiServer, management: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "edge.kubeconfig", DOWNSTREAM)
    remote = ["--mode", "remote", "--kubeconfig", str(kubeconfig)]
    assert register(capsys, management, "edge", *remote, "--label", "env=dev").code == 0
    server.store.patch(CLUSTER, "edge", {"spec": {"values": {"tier": 1}, "paused": True}}, WS)
    rotated = write_kubeconfig(
        tmp_path / "rotated.kubeconfig",
        {**DOWNSTREAM, "users": [{"name": "admin", "user": {"token": "rotated"}}]},
    )
    result = register(
        capsys,
        management,
        "edge",
        "--mode",
        "remote",
        "--kubeconfig",
        str(rotated),
        "--label",
        "env=prod",
        "--label",
        "team=a",
    )
    assert result.code == 0, result.stderr
    assert "updated" in result.stderr
    cluster = server.store.get(CLUSTER, "edge", WS)
    assert cluster["metadata"]["labels"] == {"env": "prod", "team": "a"}
    assert cluster["spec"]["values"] == {"tier": 1}
    assert cluster["spec"]["paused"] is True
    secret = server.store.get(SECRET, "edge-kubeconfig", WS)
    assert base64.b64decode(secret["data"]["value"]) == rotated.read_bytes()


def _file_backed() -> dict[str, Any]:
    clusters = [{"name": "edge", "cluster": {"server": "https://e", "certificate-authority": "ca"}}]
    return {**DOWNSTREAM, "clusters": clusters}


BAD_INPUT = [
    (["Edge_1"], None, "metadata.name", "invalid-name"),
    (["edge", "--label", "env"], None, "--label: 'env' is not KEY=VALUE", "label-without-value"),
    (["edge", "--label", "bad key=x"], None, "metadata.labels", "bad-label-key"),
    (["edge", "--mode", "remote"], None, "--kubeconfig: remote mode needs", "remote-without-kc"),
    (["edge"], DOWNSTREAM, "--kubeconfig: only remote mode", "pull-with-kubeconfig"),
    (
        ["edge", "--mode", "remote"],
        _file_backed(),
        "refers to the file certificate-authority",
        "kubeconfig-with-file-paths",
    ),
    (
        ["edge", "--mode", "remote"],
        {**DOWNSTREAM, "current-context": "gone"},
        "has no context named 'gone'",
        "unknown-current-context",
    ),
    (["edge", "--mode", "remote"], {"kind": "Config"}, "is not a kubeconfig", "no-clusters"),
]


@pytest.mark.parametrize(
    ("args", "kubeconfig", "message"),
    [pytest.param(a, k, m, id=i) for a, k, m, i in BAD_INPUT],
)
def test_bad_input_exits_2_naming_the_field_and_writes_nothing(
    server: ApiServer,
    management: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    kubeconfig: dict[str, Any] | None,
    message: str,
) -> None:
    extra = []
    if kubeconfig is not None:
        extra = ["--kubeconfig", str(write_kubeconfig(tmp_path / "kc", kubeconfig))]
    result = register(capsys, management, *args, *extra)
    assert result.code == 2, result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert server.store.list(CLUSTER, WS).items == []
    assert server.store.list(SECRET, WS).items == []


def test_a_secret_bundler_did_not_write_is_left_alone(
    server: ApiServer, management: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capi_owned = {"metadata": {"name": "edge-kubeconfig", "namespace": WS}, "data": {"value": ""}}
    server.store.create(SECRET, capi_owned)
    kubeconfig = write_kubeconfig(tmp_path / "edge.kubeconfig", DOWNSTREAM)
    result = register(
        capsys, management, "edge", "--mode", "remote", "--kubeconfig", str(kubeconfig)
    )
    assert result.code == 2
    assert f"Secret {WS}/edge-kubeconfig: exists and was not written by" in result.stderr
    assert server.store.get(SECRET, "edge-kubeconfig", WS)["data"] == {"value": ""}
    with pytest.raises(NotFound):
        server.store.get(CLUSTER, "edge", WS)


def test_an_imported_cluster_is_left_alone(
    server: ApiServer, management: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    owner = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "name": "edge",
        "uid": "u-1",
        "controller": True,
    }
    imported = {"metadata": {"name": "edge", "namespace": WS, "ownerReferences": [owner]}}
    server.store.create(CLUSTER, imported)
    kubeconfig = write_kubeconfig(tmp_path / "edge.kubeconfig", DOWNSTREAM)
    remote = ["--mode", "remote", "--kubeconfig", str(kubeconfig)]
    result = register(capsys, management, "edge", *remote, "--label", "env=prod")
    assert result.code == 2
    assert f"Cluster {WS}/edge: is controlled by Cluster edge" in result.stderr
    assert not server.store.get(CLUSTER, "edge", WS)["metadata"].get("labels")
    assert server.store.list(SECRET, WS).items == [], "nothing is written"


def test_missing_workspace_exits_1_naming_it(
    management: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = register(capsys, management, "edge", "--namespace", "nowhere")
    assert result.code == 1
    assert "namespace nowhere: does not exist on the management cluster" in result.stderr


def test_pull_registration_gives_the_agent_chart_a_working_kubeconfig(
    server: ApiServer, management: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = register(capsys, management, "edge", "--label", "env=prod")
    assert result.code == 0, result.stderr
    assert f"--cluster {WS}/edge --server URL --helm-values" in result.stderr
    server.store.create(
        BUNDLE, bundle([{"clusterSelector": {"matchLabels": {"env": "prod"}}}]).to_wire()
    )
    manager_chart = render(MANAGER_CHART)
    account = deployment(manager_chart, "manager")["spec"]["template"]["spec"]["serviceAccountName"]
    (role,) = [r for r in of_kind(manager_chart, "ClusterRole") if r["metadata"]["name"] == account]
    chart_rules = [PolicyRule.from_dict(r) for r in role["rules"]]
    store = KubeStore.from_kubeconfig(manager_kubeconfig(server, tmp_path, chart_rules), None)
    running = start_manager(store, ManagerOptions(workers=2, namespaces=(WS,)))
    namespace = cluster_namespace(WS, "edge")
    try:
        wait_until("the deployment", lambda: exists(server, BUNDLE_DEPLOYMENT, "app", namespace))
        values = run_cli(
            capsys,
            "agent-kubeconfig",
            "--cluster",
            f"{WS}/edge",
            "--kubeconfig",
            str(management),
            "--wait",
            str(WAIT),
            "--helm-values",
        )
    finally:
        running.stop(WAIT)
        store.close()
    assert values.code == 0, values.stderr
    chart_values = yaml.safe_load(values.stdout)
    assert chart_values["cluster"] == f"{WS}/edge"
    assert chart_values["management"]["server"] == server.url
    assert chart_values["management"]["namespace"] == namespace
    (secret,) = of_kind(render(AGENT_CHART, chart_values), "Secret")
    kubeconfig = base64.b64decode(secret["data"]["agent.kubeconfig"])
    with KubeStore.from_kubeconfig_text(kubeconfig) as agent:
        names = [bd["metadata"]["name"] for bd in agent.list(BUNDLE_DEPLOYMENT, namespace).items]
    assert names == ["app"]
