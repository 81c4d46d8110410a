"""`bundler agent-kubeconfig` end to end over the test API server: a manager sets up a Cluster's
agent identity, the server's token controller fills the token Secret, and the command turns it
into a kubeconfig the agent's store loads and lists its BundleDeployments with."""

from __future__ import annotations

import base64
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE, SECRET
from bundler.apiserver import ApiServer
from bundler.apiserver.tokens import TEST_CA_PEM
from bundler.core.agent.identity import AGENT_TOKEN_SECRET
from bundler.core.naming import cluster_namespace
from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions, KubeStore
from bundler.manager.app import start_manager
from bundler.manager.options import ManagerOptions
from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import CliResult, run_cli
from tests.support.commands.api_waits import WAIT, exists, wait_until

FAST = KubeOptions(retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0))
NS = cluster_namespace(WS, "a")
CLUSTER_REF = f"{WS}/a"


@dataclass(frozen=True)
class Fleet:
    server: ApiServer
    kubeconfig: Path

    def token(self) -> str:
        secret = self.server.store.get(SECRET, AGENT_TOKEN_SECRET, NS)
        return base64.b64decode(secret["data"]["token"]).decode()


@contextmanager
def fleet(
    tmp_path: Path,
    *,
    manager: bool = True,
    token_controller: bool = True,
    clusters: tuple[str, ...] = ("a",),
    remote_clusters: tuple[str, ...] = (),
) -> Iterator[Fleet]:
    """A management cluster with `clusters` (and `remote_clusters`, in remote mode) and a Bundle
    for them, and (unless told) a manager."""
    with ApiServer(token_controller=token_controller) as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        for name in clusters:
            server.store.create(CLUSTER, cluster(name).to_wire())
        for name in remote_clusters:
            remote = cluster(name, agentMode="remote", kubeConfigSecret=f"{name}-kubeconfig")
            server.store.create(CLUSTER, remote.to_wire())
        server.store.create(BUNDLE, bundle([{"clusterSelector": {}}]).to_wire())
        world = Fleet(server, server.kubeconfig(tmp_path / "management"))
        if not manager:
            yield world
            return
        with running_manager(world):
            yield world


@contextmanager
def running_manager(world: Fleet) -> Iterator[None]:
    store = KubeStore.from_kubeconfig(world.kubeconfig, None, FAST)
    running = start_manager(store, ManagerOptions(workers=2))
    try:
        yield
    finally:
        running.stop(WAIT)
        store.close()


def agent_kubeconfig(
    capsys: pytest.CaptureFixture[str], management: Path, *args: str, cluster: str = CLUSTER_REF
) -> CliResult:
    return run_cli(
        capsys,
        "agent-kubeconfig",
        "--cluster",
        cluster,
        "--kubeconfig",
        str(management),
        *args,
    )


def list_deployments(kubeconfig: Path) -> list[str]:
    """What the agent sees with the kubeconfig: its BundleDeployments' names."""
    with KubeStore.from_kubeconfig(kubeconfig, None, FAST) as agent:
        return [bd["metadata"]["name"] for bd in agent.list(BUNDLE_DEPLOYMENT, NS).items]


def identity_ready(server: ApiServer, *names: str) -> bool:
    """The manager created the token Secrets and recorded the cluster namespaces."""
    for name in names or ("a",):
        namespace = cluster_namespace(WS, name)
        status = server.store.get(CLUSTER, name, WS).get("status") or {}
        if status.get("namespace") != namespace:
            return False
        if not exists(server, SECRET, AGENT_TOKEN_SECRET, namespace):
            return False
    return True


def test_kubeconfig_lets_the_agent_list_its_deployments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fleet(tmp_path) as world:
        result = agent_kubeconfig(capsys, world.kubeconfig, "--wait", str(WAIT))
        assert result.code == 0, result.stderr
        config = yaml.safe_load(result.stdout)
        context = config["contexts"][0]["context"]
        assert context["namespace"] == NS
        assert config["users"][0]["user"] == {"token": world.token()}
        assert config["clusters"][0]["cluster"] == {
            "server": world.server.url,
            "certificate-authority-data": base64.b64encode(TEST_CA_PEM.encode()).decode(),
        }
        assert world.token() not in result.stderr
        path = tmp_path / "agent.kubeconfig"
        path.write_text(result.stdout)
        wait_until("the deployment", lambda: exists(world.server, BUNDLE_DEPLOYMENT, "app", NS))
        assert list_deployments(path) == ["app"]


def test_output_file_is_private_and_the_token_stays_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "agent.kubeconfig"
    output.write_text("old")
    output.chmod(0o644)
    with fleet(tmp_path) as world:
        result = agent_kubeconfig(
            capsys,
            world.kubeconfig,
            "--wait",
            str(WAIT),
            "--output",
            str(output),
            "--server",
            "https://mgmt.example:6443",
        )
        assert result.code == 0, result.stderr
        assert result.stdout == ""
        assert world.token() not in result.stderr
        assert CLUSTER_REF in result.stderr
        assert stat.S_IMODE(output.stat().st_mode) == 0o600
        config = yaml.safe_load(output.read_text())
        assert config["clusters"][0]["cluster"]["server"] == "https://mgmt.example:6443"
        assert config["users"][0]["user"]["token"] == world.token()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.kubeconfig", "management"]


def fill_token_when_created(server: ApiServer, token: str) -> threading.Thread:
    """A token controller that puts `token`, and no CA, into the Secret once the manager made it."""

    def fill() -> None:
        wait_until("the token Secret", lambda: exists(server, SECRET, AGENT_TOKEN_SECRET, NS))
        data = {"token": base64.b64encode(token.encode()).decode()}
        server.store.patch(SECRET, AGENT_TOKEN_SECRET, {"data": data}, NS)

    thread = threading.Thread(target=fill, name="fill-token", daemon=True)
    thread.start()
    return thread


def test_waits_for_the_token_and_trusts_the_server_as_the_management_kubeconfig_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fleet(tmp_path, token_controller=False) as world:
        insecure = yaml.safe_load(world.kubeconfig.read_text())
        insecure["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
        management = tmp_path / "insecure"
        management.write_text(yaml.safe_dump(insecure))
        filler = fill_token_when_created(world.server, "late-token")
        result = agent_kubeconfig(capsys, management, "--wait", str(WAIT))
        filler.join(WAIT)
        assert result.code == 0, result.stderr
        config = yaml.safe_load(result.stdout)
        assert config["clusters"][0]["cluster"] == {
            "server": world.server.url,
            "insecure-skip-tls-verify": True,
        }
        assert config["users"][0]["user"] == {"token": "late-token"}


@pytest.mark.parametrize(
    ("setup", "cluster", "args", "code", "message"),
    [
        ({}, f"{WS}/nope", ["--wait", "0"], 2, f"Cluster {WS}/nope: does not exist"),
        (
            {"manager": False},
            CLUSTER_REF,
            ["--wait", "0"],
            1,
            f"Namespace {NS}: does not exist after 0s",
        ),
        (
            {"token_controller": False},
            CLUSTER_REF,
            ["--wait", "0.3"],
            1,
            f"Secret {NS}/{AGENT_TOKEN_SECRET}: data.token: holds no token after 0.3s",
        ),
        (
            {"remote_clusters": ("edge",)},
            f"{WS}/edge",
            ["--wait", "1"],
            2,
            f"Cluster {WS}/edge: spec.agentMode: is in remote mode",
        ),
        ({"manager": False}, CLUSTER_REF, ["--server", "mgmt:6443"], 2, "--server: 'mgmt:6443'"),
        ({"manager": False}, CLUSTER_REF, ["--output", "/nonexistent/x"], 2, "--output: directory"),
        ({"manager": False}, "a", [], 2, "--cluster: 'a' is not NAMESPACE/NAME"),
    ],
    ids=[
        "unknown-cluster",
        "namespace-not-made",
        "token-never-appears",
        "cluster-in-remote-mode",
        "bad-server",
        "output-directory-missing",
        "cluster-not-a-reference",
    ],
)
def test_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    setup: dict[str, Any],
    cluster: str,
    args: list[str],
    code: int,
    message: str,
) -> None:
    with fleet(tmp_path, **setup) as world:
        if setup.get("token_controller") is False:
            wait_until("the agent identity", lambda: identity_ready(world.server))
        result = agent_kubeconfig(capsys, world.kubeconfig, *args, cluster=cluster)
    assert (result.code, result.stdout) == (code, "")
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "file not found"), ("clusters: [", "cannot load")],
    ids=["missing", "not-yaml"],
)
def test_bad_management_kubeconfig(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "management"
    if content is not None:
        path.write_text(content)
    result = agent_kubeconfig(capsys, path)
    assert (result.code, result.stdout) == (2, "")
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "wait", ["-1", "nan", "inf", "soon"], ids=["negative", "nan", "infinite", "not-a-number"]
)
def test_bad_wait_is_invalid_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wait: str
) -> None:
    try:
        result = agent_kubeconfig(capsys, tmp_path / "management", "--wait", wait)
    except SystemExit as exited:  # argparse's own usage error, for what is not a number
        result = CliResult(int(str(exited.code)), "", capsys.readouterr().err)
    assert result.code == 2
    assert "--wait" in result.stderr


def token_in(server: ApiServer, namespace: str) -> str:
    secret = server.store.get(SECRET, AGENT_TOKEN_SECRET, namespace)
    return base64.b64decode(secret["data"]["token"]).decode()


def test_a_tampered_status_namespace_never_yields_another_clusters_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = cluster_namespace(WS, "b")
    with fleet(tmp_path, clusters=("a", "b"), manager=False) as world:
        with running_manager(world):
            wait_until("both identities", lambda: identity_ready(world.server, "a", "b"))
        # Cluster a's agent may write its Cluster's status, status.namespace included.
        world.server.store.patch_status(CLUSTER, "a", {"status": {"namespace": other}}, WS)
        result = agent_kubeconfig(capsys, world.kubeconfig, "--wait", "0")
        assert result.code == 0, result.stderr
        config = yaml.safe_load(result.stdout)
        assert config["contexts"][0]["context"]["namespace"] == NS
        assert config["users"][0]["user"] == {"token": world.token()}
        assert token_in(world.server, other) not in result.stdout


def test_a_namespace_without_the_clusters_labels_yields_no_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fleet(tmp_path, manager=False) as world:
        with running_manager(world):
            wait_until("the agent identity", lambda: identity_ready(world.server, "a"))
        world.server.store.patch(NAMESPACE, NS, {"metadata": {"labels": None}}, None)
        result = agent_kubeconfig(capsys, world.kubeconfig, "--wait", "0")
        assert (result.code, result.stdout) == (1, "")
        assert f"Namespace {NS}: metadata.labels: lacks Cluster {CLUSTER_REF}'s" in result.stderr
        assert world.token() not in result.stderr
