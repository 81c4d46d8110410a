"""Flux's real source-controller and helm-controller for one test cluster.

Both run outside the cluster as its admin (Flux's own install gives them cluster-admin), found
through KUBECONFIG (their flags do not include --kubeconfig), with every address on loopback:
source-controller's artifact server advertises the address helm-controller downloads from.
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


def start_flux(supervisor: Supervisor, tools: Tools, cluster: TestCluster, workdir: Path) -> Flux:
    """source-controller and helm-controller reconciling every namespace of `cluster`."""
    environment = {"KUBECONFIG": str(cluster.admin_kubeconfig), "RUNTIME_NAMESPACE": "flux-system"}
    storage = loopback(free_port())
    artifacts = workdir / cluster.name / "flux-artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    processes = []
    for name, extra in (
        (
            "source-controller",
            [
                f"--storage-path={artifacts}",
                f"--storage-addr={storage}",
                f"--storage-adv-addr={storage}",
            ],
        ),
        # Dependencies are looked at again after 5 s rather than 30: tests wait for them.
        ("helm-controller", ["--requeue-dependency=5s"]),
    ):
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
            env=environment,
        )
        wait_until(
            partial(_ready, health),
            f"{cluster.name}'s {name} to be ready",
            timeout=START_TIMEOUT_S,
            supervisor=supervisor,
        )
        processes.append(process)
    return Flux(cluster.name, processes[0], processes[1])


def _ready(address: str) -> bool:
    with urllib.request.urlopen(f"http://{address}/readyz", timeout=5) as response:
        return bool(response.status == 200)
