"""bundler deployed as its Helm charts deploy it, minus the container: the RBAC objects the charts
render are applied with kubectl, and each process runs with the arguments of the chart's Deployment
under a token of the chart's ServiceAccount (the TokenRequest API, as a pod's projected token).

Only what a pod would differ in is changed: where the kubeconfig comes from (KUBECONFIG instead of
the pod's ServiceAccount mount; the pull agent's management kubeconfig is the one the chart renders
into its Secret), loopback addresses for metrics and health, and text logs.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.charts.rendering import AGENT_CHART, MANAGER_CHART, render
from tests.support.e2e.controlplane import TestCluster
from tests.support.e2e.ports import free_port, loopback
from tests.support.e2e.processes import Process, Supervisor

Obj = dict[str, Any]
RBAC_KINDS = frozenset(
    {"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
)
MANAGER_NAMESPACE = "bundler-system"
RELEASE = "bundler"
AGENT_RELEASE = "bundler-agent"
BUNDLER = (sys.executable, "-m", "bundler")
CLI_TIMEOUT_S = 120


def bundler_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The `bundler` command, as a user types it."""
    done = subprocess.run(
        [*BUNDLER, *args], capture_output=True, text=True, check=False, timeout=CLI_TIMEOUT_S
    )
    if check and done.returncode != 0:
        raise AssertionError(f"bundler {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done


def container_args(objects: Sequence[Obj], container: str) -> list[str]:
    """The args of the container `container` in the rendered Deployments."""
    for obj in objects:
        if obj["kind"] != "Deployment":
            continue
        for spec in obj["spec"]["template"]["spec"]["containers"]:
            if spec["name"] == container:
                return [str(arg) for arg in spec["args"]]
    raise AssertionError(f"no Deployment runs a container {container!r}")


def rbac_of(objects: Sequence[Obj]) -> list[Obj]:
    found = [obj for obj in objects if obj["kind"] in RBAC_KINDS]
    assert found, "the chart rendered no RBAC objects"
    return found


@dataclass(frozen=True)
class ManagerInstall:
    """The management cluster's side of the `bundler` chart: its RBAC and the two processes'
    arguments (manager and remote agent)."""

    manager_args: list[str]
    remote_agent_args: list[str]
    manager_account: str
    remote_agent_account: str


def install_manager_chart(management: TestCluster) -> ManagerInstall:
    objects = render(MANAGER_CHART, {}, name=RELEASE, namespace=MANAGER_NAMESPACE)
    management.kubectl("create", "namespace", MANAGER_NAMESPACE, check=False)
    management.apply(rbac_of(objects))
    accounts = {
        deployment_container(obj): obj["spec"]["template"]["spec"]["serviceAccountName"]
        for obj in objects
        if obj["kind"] == "Deployment"
    }
    return ManagerInstall(
        container_args(objects, "manager"),
        container_args(objects, "remote-agent"),
        accounts["manager"],
        accounts["remote-agent"],
    )


def deployment_container(deployment: Obj) -> str:
    return str(deployment["spec"]["template"]["spec"]["containers"][0]["name"])


def agent_chart_objects(values: Obj, namespace: str) -> list[Obj]:
    return render(AGENT_CHART, values, name=AGENT_RELEASE, namespace=namespace)


def rendered_management_kubeconfig(objects: Sequence[Obj], path: Path) -> Path:
    """The kubeconfig the agent chart writes into its Secret, as the pod would mount it."""
    (secret,) = [o for o in objects if o["kind"] == "Secret"]
    path.write_bytes(base64.b64decode(secret["data"]["agent.kubeconfig"]))
    path.chmod(0o600)
    return path


def outside_the_pod(args: Sequence[str], replacements: dict[str, str]) -> list[str]:
    """A chart's container args run on this machine: flags replaced by name, loopback
    endpoints, text logs."""
    overrides = {
        "--metrics-addr": loopback(free_port()),
        "--health-addr": loopback(free_port()),
        "--log-format": "text",
        **replacements,
    }
    kept = [arg for arg in args if arg.split("=", 1)[0] not in overrides]
    return [*kept, *(f"{flag}={value}" for flag, value in overrides.items())]


def start_bundler(
    supervisor: Supervisor, name: str, args: Sequence[str], kubeconfig: Path
) -> Process:
    return supervisor.start(name, [*BUNDLER, *args], env={"KUBECONFIG": str(kubeconfig)})


def read_yaml(text: str) -> Obj:
    loaded: Obj = yaml.safe_load(text)
    return loaded
