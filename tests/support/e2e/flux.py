"""Flux's real source-controller and helm-controller for one test cluster, and its
kustomize-controller for the tests that ask for it.

They run outside the cluster as its admin (Flux's own install gives them cluster-admin), found
through KUBECONFIG (their flags do not include --kubeconfig), with every address on loopback:
source-controller's artifact server advertises the address helm-controller and kustomize-controller
download from.
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from tests.support.e2e.controlplane import START_TIMEOUT_S, TestCluster
from tests.support.e2e.ports import free_port, loopback
from tests.support.e2e.processes import Process, Supervisor, wait_until
from tests.support.e2e.tools import Tools


@dataclass(frozen=True)
class Flux:
    cluster: str
    source_controller: Process
    helm_controller: Process

    @property
    def log_sources(self) -> tuple[Process, ...]:
        return (self.source_controller, self.helm_controller)


def install_flux_crds(cluster: TestCluster, tools: Tools) -> None:
    cluster.install_crds(*tools.flux_crds)


def _environment(cluster: TestCluster) -> dict[str, str]:
    return {"KUBECONFIG": str(cluster.admin_kubeconfig), "RUNTIME_NAMESPACE": "flux-system"}


def _start_controller(
    supervisor: Supervisor, tools: Tools, cluster: TestCluster, name: str, extra: list[str]
) -> Process:
    """One Flux controller on `cluster`, on loopback addresses of its own; waits until ready."""
    health = loopback(free_port())
    process = supervisor.start(
        f"{cluster.name}-{name}",
        [
            tools.binary(name),
            f"--metrics-addr={loopback(free_port())}",
            f"--health-addr={health}",
            "--enable-leader-election=false",
            "--log-encoding=console",
            *extra,
        ],
        env=_environment(cluster),
    )
    wait_until(
        partial(_ready, health),
        f"{cluster.name}'s {name} to be ready",
        timeout=START_TIMEOUT_S,
        supervisor=supervisor,
    )
    return process


def start_flux(supervisor: Supervisor, tools: Tools, cluster: TestCluster, workdir: Path) -> Flux:
    """source-controller and helm-controller reconciling every namespace of `cluster`."""
    storage = loopback(free_port())
    artifacts = workdir / cluster.name / "flux-artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    source_controller = _start_controller(
        supervisor,
        tools,
        cluster,
        "source-controller",
        [
            f"--storage-path={artifacts}",
            f"--storage-addr={storage}",
            f"--storage-adv-addr={storage}",
        ],
    )
    # Dependencies are looked at again after 5 s rather than 30: tests wait for them.
    helm_controller = _start_controller(
        supervisor, tools, cluster, "helm-controller", ["--requeue-dependency=5s"]
    )
    return Flux(cluster.name, source_controller, helm_controller)


def start_kustomize_controller(
    supervisor: Supervisor, tools: Tools, cluster: TestCluster
) -> Process:
    """kustomize-controller reconciling every namespace of `cluster`, beside its Flux: it
    downloads the artifacts its source-controller advertises on loopback."""
    return _start_controller(
        supervisor, tools, cluster, "kustomize-controller", ["--requeue-dependency=5s"]
    )


def _ready(address: str) -> bool:
    with urllib.request.urlopen(f"http://{address}/readyz", timeout=5) as response:
        return bool(response.status == 200)
