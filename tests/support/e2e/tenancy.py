"""One test's share of the e2e environment: a workspace on the management cluster, an agent
namespace on each downstream cluster, and the bundler processes the test starts there.

Clusters are registered and agents installed the way the README tells users to: `bundler cluster
register`, `bundler agent-kubeconfig --helm-values` into the agent chart, the chart's RBAC applied,
the agent run with the chart's arguments and the kubeconfig the chart writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bundler.core.naming import cluster_namespace
from tests.support.e2e.charts import CHART, push_chart, write_app_chart
from tests.support.e2e.controlplane import TestCluster
from tests.support.e2e.deployment import (
    MANAGER_NAMESPACE,
    ManagerInstall,
    agent_chart_objects,
    bundler_cli,
    container_args,
    outside_the_pod,
    rbac_of,
    rendered_management_kubeconfig,
    start_bundler,
)
from tests.support.e2e.environment import Environment
from tests.support.e2e.processes import Process, wait_until

Obj = dict[str, Any]


def workspace_name(test_name: str, serial: int) -> str:
    """A namespace name for a test: its name, shortened, and a serial number."""
    words = re.sub(r"[^a-z0-9]+", "-", test_name.lower().removeprefix("test_")).strip("-")
    return f"{words[:40].rstrip('-')}-{serial}"


@dataclass
class Tenancy:
    env: Environment
    install: ManagerInstall
    workspace: str
    workdir: Path
    started: list[Process] = field(default_factory=list)
    # Every bundler process the test ran, stopped ones included.
    ran: list[Process] = field(default_factory=list)
    # The kubeconfig each pull agent runs with on its own cluster, by cluster.
    agent_kubeconfigs: dict[str, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.management.kubectl("create", "namespace", self.workspace)

    @property
    def management(self) -> TestCluster:
        return self.env.management

    @property
    def agent_namespace(self) -> str:
        """The pull agents' namespace on the downstream clusters (the chart's release namespace)."""
        return f"agent-{self.workspace}"

    def cluster_namespace(self, cluster: str) -> str:
        return cluster_namespace(self.workspace, cluster)

    # -- bundler's processes ------------------------------------------------------------------

    def start_manager(self, *extra: str) -> Process:
        kubeconfig = self.management.service_account_kubeconfig(
            self.install.manager_account, MANAGER_NAMESPACE
        )
        args = outside_the_pod(
            self.install.manager_args,
            # The test's own workspace and Lease, so tests never wait for each other's leader.
            {"--namespace": self.workspace, "--lease-namespace": self.workspace},
        )
        return self._start("manager", [*args, *extra], kubeconfig)

    def start_remote_agent(self) -> Process:
        kubeconfig = self.management.service_account_kubeconfig(
            self.install.remote_agent_account, MANAGER_NAMESPACE
        )
        args = outside_the_pod(
            self.install.remote_agent_args,
            # valuesFrom objects are read from the test's agent namespace downstream.
            {"--workspace": self.workspace, "--namespace": self.agent_namespace},
        )
        return self._start("remote-agent", args, kubeconfig)

    def start_pull_agent(self, cluster: str, *, heartbeat: float | None = None) -> Process:
        """Install and start `cluster`'s agent from the values `agent-kubeconfig` prints;
        `heartbeat` overrides the chart's interval (how soon the agent learns a mode change)."""
        downstream = self.env.downstream[cluster]
        printed = bundler_cli(
            "agent-kubeconfig", f"--cluster={self.workspace}/{cluster}",
            f"--kubeconfig={self.management.admin_kubeconfig}", "--helm-values",
        ).stdout  # fmt: skip
        objects = agent_chart_objects(yaml.safe_load(printed), self.agent_namespace)
        downstream.kubectl("create", "namespace", self.agent_namespace, check=False)
        downstream.apply(rbac_of(objects))
        (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        management_kubeconfig = rendered_management_kubeconfig(
            objects, self.workdir / f"{cluster}.management.kubeconfig"
        )
        replacements = {"--management-kubeconfig": str(management_kubeconfig)}
        if heartbeat is not None:
            replacements["--heartbeat-interval"] = f"{heartbeat:g}"
        args = outside_the_pod(container_args(objects, "agent"), replacements)
        kubeconfig = downstream.service_account_kubeconfig(account, self.agent_namespace)
        self.agent_kubeconfigs[cluster] = kubeconfig
        return self._start(f"agent-{cluster}", args, kubeconfig)

    def _start(self, role: str, args: list[str], kubeconfig: Path) -> Process:
        process = start_bundler(self.env.supervisor, f"{self.workspace}-{role}", args, kubeconfig)
        self.started.append(process)
        self.ran.append(process)
        return process

    def stop(self, process: Process) -> None:
        self.env.supervisor.stop(process)
        if process in self.started:
            self.started.remove(process)

    def stop_all(self) -> None:
        while self.started:
            self.stop(self.started[-1])

    # -- registering clusters -----------------------------------------------------------------

    def register(self, cluster: str, labels: dict[str, str], *, remote: bool = False) -> None:
        """`bundler cluster register`, pull mode or remote mode (the downstream kubeconfig)."""
        flags = [f"--label={key}={value}" for key, value in labels.items()]
        if remote:
            downstream = self.env.downstream[cluster]
            flags += ["--mode=remote", f"--kubeconfig={downstream.admin_kubeconfig}"]
        bundler_cli(
            "cluster", "register", cluster, f"--namespace={self.workspace}",
            f"--management-kubeconfig={self.management.admin_kubeconfig}", *flags,
        )  # fmt: skip

    # -- charts and Bundles ------------------------------------------------------------------

    @property
    def chart_base(self) -> str:
        """The test's own registry path: its chart versions are invisible to other tests."""
        return self.env.registry.oci(self.workspace)

    def publish(
        self,
        version: str,
        *,
        broken: bool = False,
        stuck: bool = False,
        extra: dict[str, str] | None = None,
    ) -> None:
        """`bundler chart push` of e2e-app at `version` into the test's registry path (with the
        `extra` files in the chart)."""
        chart = write_app_chart(
            self.workdir / "charts", version, broken=broken, stuck=stuck, extra=extra
        )
        push_chart(chart, self.chart_base)

    def app_bundle(self, name: str, helm: Obj, **spec: Any) -> Obj:
        """A Bundle of e2e-app from the test's registry path, released into `release_namespace`."""
        helm = {"repo": self.chart_base, "chart": CHART, "insecure": True, **helm}
        spec.setdefault("namespace", self.release_namespace)
        spec.setdefault("targets", [{"clusterSelector": {}}])
        return {
            "apiVersion": "bundler.dev/v1alpha1",
            "kind": "Bundle",
            "metadata": {"name": name, "namespace": self.workspace},
            "spec": {"helm": helm, **spec},
        }

    @property
    def release_namespace(self) -> str:
        return f"apps-{self.workspace}"

    # -- reading and writing bundler's objects ------------------------------------------------

    def apply(self, *objects: Obj) -> None:
        for obj in objects:
            obj.setdefault("metadata", {})["namespace"] = self.workspace
        self.management.apply(list(objects))

    def bundle(self, name: str) -> Obj | None:
        return self.management.get("bundles.bundler.dev", name, self.workspace)

    def bundle_deployments(self, cluster: str) -> list[Obj]:
        return self.management.list(
            "bundledeployments.bundler.dev", self.cluster_namespace(cluster)
        )

    def ready_clusters(self, bundle: str) -> str | None:
        found = self.bundle(bundle)
        display = ((found or {}).get("status") or {}).get("display") or {}
        ready: str | None = display.get("readyClusters")
        return ready

    def eventually(
        self,
        condition: Callable[[], object],
        what: str,
        *,
        timeout: float = 240.0,
        detail: Callable[[], str] | None = None,
    ) -> Any:
        """Poll `condition` until it holds (returned), failing with `what` after `timeout`."""
        return wait_until(
            condition, what, timeout=timeout, supervisor=self.env.supervisor, detail=detail
        )

    def forbidden(self) -> list[str]:
        """Lines of bundler's logs where the API server refused it something (403)."""
        return [
            f"{process.name}: {line}"
            for process in self.ran
            for line in process.log_text().splitlines()
            if _FORBIDDEN.search(line)
        ]


# How a 403 reaches a log: the server's reason (Forbidden) or its message ("... is forbidden: User
# ..."); a bare "403" would also match a timestamp's milliseconds.
_FORBIDDEN = re.compile(r"\b[Ff]orbidden\b")
