"""The world `make e2e` runs in, started once per test session.

One etcd; a management cluster and two downstream clusters (`edge-1`, `edge-2`), each a real
kube-apiserver with its own etcd prefix and a kube-controller-manager; Flux's source-controller and
helm-controller on every one of them (the management cluster's serve remote mode), and its
kustomize-controller on the clusters whose tests ask for it (Flux's CRDs, its own included, are
installed on every cluster); bundler's CRDs
and the RBAC its Helm charts render, applied with kubectl; Debian's docker-registry holding the test
charts as `bundler chart push` writes them, and a Helm HTTP repository.

Tests share the clusters, never their objects: each takes a workspace of its own, its own agent
namespace downstream and its own release namespaces (`Tenancy`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.e2e.charts import write_app_chart
from tests.support.e2e.controlplane import Etcd, TestCluster, start_cluster, start_etcd
from tests.support.e2e.flux import (
    Flux,
    install_flux_crds,
    start_flux,
    start_kustomize_controller,
)
from tests.support.e2e.processes import Process, Supervisor
from tests.support.e2e.tools import Tools
from tests.support.helm_repository import HelmRepository, serve_helm_repository
from tests.support.registry_fixtures import LocalRegistry, run_registry

DOWNSTREAM = ("edge-1", "edge-2")
# What the Helm HTTP repository serves, for every test; tests push to the registry what they need.
HELM_REPOSITORY_VERSIONS = ("1.0.0", "1.1.0")
ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Environment:
    tools: Tools
    workdir: Path
    supervisor: Supervisor
    etcd: Etcd
    management: TestCluster
    downstream: dict[str, TestCluster]
    fluxes: dict[str, Flux]
    registry: LocalRegistry
    helm_repository: HelmRepository
    kustomize_controllers: dict[str, Process] = field(default_factory=dict)

    def kustomize_controller(self, cluster: str) -> Process:
        """`cluster`'s kustomize-controller, started on first use and kept for the session: most
        tests deliver Helm charts only and need not pay for one more process per cluster."""
        if cluster not in self.kustomize_controllers:
            target = (
                self.management if cluster == self.management.name else self.downstream[cluster]
            )
            self.kustomize_controllers[cluster] = start_kustomize_controller(
                self.supervisor, self.tools, target
            )
        return self.kustomize_controllers[cluster]

    @property
    def clusters(self) -> list[TestCluster]:
        return [self.management, *self.downstream.values()]

    @contextmanager
    def bare_cluster(self, name: str) -> Iterator[TestCluster]:
        """A downstream cluster of one test's own, without Flux, stopped after it."""
        cluster = start_cluster(self.supervisor, self.tools, self.etcd, self.workdir, name)
        self.downstream[name] = cluster
        try:
            yield cluster
        finally:
            del self.downstream[name]
            for process in cluster.log_sources:
                self.supervisor.stop(process)


@contextmanager
def running_environment(tools: Tools, workdir: Path) -> Iterator[Environment]:
    with ExitStack() as stack:
        supervisor = Supervisor(workdir / "logs")
        stack.callback(supervisor.stop_all)
        etcd = start_etcd(supervisor, tools, workdir)
        management = start_cluster(supervisor, tools, etcd, workdir, "management")
        downstream = {
            name: start_cluster(supervisor, tools, etcd, workdir, name) for name in DOWNSTREAM
        }
        fluxes = {}
        for cluster in (management, *downstream.values()):
            install_flux_crds(cluster, tools)
            fluxes[cluster.name] = start_flux(supervisor, tools, cluster, workdir)
        management.install_crds(*sorted((ROOT / "crds").glob("*.yaml")))
        registry = stack.enter_context(run_registry(workdir / "registry", basic_auth=False))
        repository = stack.enter_context(serve_helm_repository(workdir / "helm-repository"))
        environment = Environment(
            tools, workdir, supervisor, etcd, management, downstream, fluxes, registry, repository
        )
        for version in HELM_REPOSITORY_VERSIONS:
            repository.publish(write_app_chart(workdir / "charts", version))
        yield environment
