"""`bundler agent` as a process: pull mode against two test API servers, stopped by SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.api.resources import BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.core.naming import cluster_namespace
from bundler.errors import InvalidInputError
from bundler.runtime.host import Host
from bundler.sim.helm_controller import SimulatedHelmController
from tests.support.agent.http_fleet import eventually
from tests.support.agent.objects import bd_object
from tests.support.builders import WS, cluster
from tests.support.cli_helpers import LOOPBACK_ENDPOINTS, run_command
from tests.support.identities import agent_identity_by_hand

STOP_WAIT = 20.0


@pytest.fixture
def servers() -> Iterator[tuple[ApiServer, ApiServer]]:
    with ApiServer() as management, ApiServer() as downstream:
        yield management, downstream


# Free ports on loopback: tests never listen on every interface or on fixed ports.


def test_pull_agent_deploys_reports_and_stops_on_sigterm(
    servers: tuple[ApiServer, ApiServer], tmp_path: Path
) -> None:
    management, downstream = servers
    namespace = cluster_namespace(WS, "c1")
    management.store.create(NAMESPACE, {"metadata": {"name": WS}})
    management.store.create(CLUSTER, cluster("c1").to_wire())
    agent_kubeconfig = agent_identity_by_hand(management, tmp_path, WS, "c1")
    management.store.create(BUNDLE_DEPLOYMENT, bd_object())
    flux_host = Host(downstream.store, workers=1)
    flux = SimulatedHelmController(flux_host, downstream.store, lambda _: (f"{WS}/c1", {}))
    flux.start()
    flux_host.start()
    argv = [
        "agent",
        "--cluster",
        f"{WS}/c1",
        "--management-kubeconfig",
        str(agent_kubeconfig),
        "--kubeconfig",
        str(downstream.kubeconfig(tmp_path / "downstream")),
        *LOOPBACK_ENDPOINTS,
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "bundler", *argv], stderr=subprocess.PIPE, text=True
    )
    try:

        def ready() -> bool:
            status = management.store.get(BUNDLE_DEPLOYMENT, "app", namespace).get("status")
            return bool(status and status.get("ready"))

        eventually(ready, "the BundleDeployment to be Ready")
        agent_status = management.store.get(CLUSTER, "c1", WS)["status"]["agent"]
        assert agent_status["lastSeen"]
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=STOP_WAIT)
        assert process.returncode == 0, stderr
        assert "stopped on SIGTERM" in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        flux_host.stop()
        flux.informer.stop()


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--management-kubeconfig", "x"], "--cluster"),
        (["--management-kubeconfig", "x", "--cluster", "no-slash"], "--cluster"),
        (["--management-kubeconfig", "x", "--cluster", "ws/c1", "--workers", "0"], "--workers"),
        (
            ["--management-kubeconfig", "x", "--cluster", "ws/c1", "--heartbeat-interval", "0"],
            "heartbeat",
        ),
        (["--management-kubeconfig", "/nonexistent/kubeconfig", "--mode", "remote"], "not found"),
        (["--cluster", "ws/c1"], "--management-kubeconfig"),
    ],
    ids=[
        "pull-without-cluster",
        "cluster-not-ns-name",
        "no-workers",
        "no-heartbeat",
        "kubeconfig-missing",
        "pull-without-management-kubeconfig",
    ],
)
def test_invalid_arguments(argv: list[str], field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        run_command("agent", *argv)
