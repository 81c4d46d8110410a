"""A real control plane on loopback: one etcd, and per test cluster a kube-apiserver (its own etcd
prefix, RBAC, real certificates, ServiceAccount signing keys) with a kube-controller-manager running
what bundler relies on: namespace deletion, garbage collection, ServiceAccounts and their token
Secrets, and the root CA ConfigMap.

`TestCluster` is one such cluster as tests use it: its URL, its admin kubeconfig, `kubectl`, and
tokens for ServiceAccounts (the TokenRequest API, as `kubectl create token` asks for one).
"""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.e2e import kubeconfigs
from tests.support.e2e.pki import ClusterPki, make_cluster_pki
from tests.support.e2e.ports import free_port, loopback
from tests.support.e2e.processes import Process, Supervisor, wait_until
from tests.support.e2e.tools import Tools

START_TIMEOUT_S = 90.0
KUBECTL_TIMEOUT_S = 60.0
SERVICE_CIDR = "10.0.0.0/24"
# What kube-controller-manager runs: no kubelet, no nodes, no workloads in these tests.
CONTROLLERS = (
    "namespace-controller",
    "garbage-collector-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
)


@dataclass(frozen=True)
class Etcd:
    url: str
    process: Process


def start_etcd(supervisor: Supervisor, tools: Tools, workdir: Path) -> Etcd:
    client, peer = f"http://{loopback(free_port())}", f"http://{loopback(free_port())}"
    process = supervisor.start(
        "etcd",
        [
            tools.binary("etcd"),
            "--name=e2e",
            f"--data-dir={workdir / 'etcd'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=e2e={peer}",
            # Test data only: durability is not worth an fsync per write on a shared disk.
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ],
    )
    wait_until(
        lambda: json.loads(_get(f"{client}/health")).get("health") == "true",
        "etcd to be healthy",
        timeout=START_TIMEOUT_S,
        supervisor=supervisor,
    )
    return Etcd(client, process)


def _get(url: str, context: ssl.SSLContext | None = None) -> str:
    with urllib.request.urlopen(url, timeout=5, context=context) as response:
        return str(response.read().decode())


@dataclass
class TestCluster:
    name: str
    url: str
    pki: ClusterPki
    admin_kubeconfig: Path
    tools: Tools
    workdir: Path
    apiserver: Process
    controller_manager: Process

    def kubectl(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        kubeconfig: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the built kubectl against this cluster (as admin unless told)."""
        done = subprocess.run(
            [self.tools.binary("kubectl"), f"--kubeconfig={kubeconfig or self.admin_kubeconfig}",
             *args],
            input=input,
            capture_output=True,
            text=True,
            check=False,
            timeout=KUBECTL_TIMEOUT_S,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} on {self.name} failed ({done.returncode}):\n"
                f"{done.stderr}"
            )
        return done

    def apply(self, objects: list[dict[str, Any]] | dict[str, Any], *args: str) -> None:
        """kubectl apply of objects (server-side: Flux's CRDs exceed the last-applied limit)."""
        docs = objects if isinstance(objects, list) else [objects]
        text = yaml.safe_dump_all(docs, sort_keys=False)
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", *args, input=text)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """One object as JSON, None when it does not exist."""
        where = ["-n", namespace] if namespace else []
        done = self.kubectl("get", kind, name, *where, "-o", "json", check=False)
        if done.returncode != 0:
            if "NotFound" in done.stderr or "not found" in done.stderr:
                return None
            raise AssertionError(f"kubectl get {kind} {name} on {self.name}: {done.stderr}")
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    def list(self, kind: str, namespace: str | None = None, *args: str) -> list[dict[str, Any]]:
        where = ["-n", namespace] if namespace else ["-A"]
        done = self.kubectl("get", kind, *where, *args, "-o", "json")
        items: list[dict[str, Any]] = json.loads(done.stdout)["items"]
        return items

    def install_crds(self, *paths: Path) -> None:
        """Apply CRD files and wait until the server serves every CRD in them."""
        for path in paths:
            self.kubectl("apply", "--server-side", "-f", str(path))
        names = [
            line.split("/", 1)[1]
            for path in paths
            for line in self.kubectl("get", "-f", str(path), "-o", "name").stdout.split()
        ]

        def established() -> bool:
            for name in names:
                crd = self.get("customresourcedefinition", name) or {}
                conditions = (crd.get("status") or {}).get("conditions") or []
                if not any(
                    c["type"] == "Established" and c["status"] == "True" for c in conditions
                ):
                    return False
            return True

        wait_until(established, f"{', '.join(names)} to be established", timeout=START_TIMEOUT_S)

    def token(self, service_account: str, namespace: str, hours: int = 6) -> str:
        """A token for a ServiceAccount from the TokenRequest API."""
        done = self.kubectl(
            "create", "token", service_account, "-n", namespace, f"--duration={hours}h"
        )
        return done.stdout.strip()

    def token_kubeconfig(
        self, path: Path, token: str, namespace: str | None = None, *, server: str | None = None
    ) -> Path:
        config = kubeconfigs.kubeconfig(
            server or self.url, self.pki.ca_cert, {"token": token}, name=self.name,
            namespace=namespace,
        )  # fmt: skip
        return kubeconfigs.write(path, config)

    def service_account_kubeconfig(self, service_account: str, namespace: str) -> Path:
        """A kubeconfig acting as the ServiceAccount (created if missing)."""
        self.kubectl("create", "namespace", namespace, check=False)
        self.kubectl("create", "serviceaccount", service_account, "-n", namespace, check=False)
        path = self.workdir / f"{namespace}.{service_account}.kubeconfig"
        return self.token_kubeconfig(path, self.token(service_account, namespace), namespace)

    def raw(self, path: str) -> str:
        """GET a non-resource path as admin (metrics, readyz)."""
        return self.kubectl("get", "--raw", path).stdout

    @property
    def log_sources(self) -> tuple[Process, ...]:
        return (self.apiserver, self.controller_manager)


def start_cluster(
    supervisor: Supervisor,
    tools: Tools,
    etcd: Etcd,
    workdir: Path,
    name: str,
    *,
    apiserver_args: Sequence[str] = (),
) -> TestCluster:
    """A kube-apiserver and kube-controller-manager for cluster `name`, ready to serve;
    `apiserver_args` are added to kube-apiserver's flags."""
    home = workdir / name
    pki = make_cluster_pki(home / "pki", name)
    port = free_port()
    url = f"https://{loopback(port)}"
    admin = kubeconfigs.write(
        home / "admin.kubeconfig",
        kubeconfigs.kubeconfig(
            url, pki.ca_cert, kubeconfigs.client_certificate_user(pki.admin_cert, pki.admin_key),
            name=name,
        ),
    )  # fmt: skip
    apiserver = supervisor.start(
        f"{name}-kube-apiserver",
        [
            tools.binary("kube-apiserver"),
            f"--etcd-servers={etcd.url}",
            f"--etcd-prefix=/{name}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_cert}",
            "--authorization-mode=RBAC",
            f"--service-account-issuer={url}",
            f"--service-account-key-file={pki.service_account_pub}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            # No Endpoints for the `kubernetes` Service: nothing runs in these clusters.
            "--endpoint-reconciler-type=none",
            "--allow-privileged=true",
            *apiserver_args,
        ],
    )
    context = ssl.create_default_context(cafile=str(pki.ca_cert))
    context.load_cert_chain(str(pki.admin_cert), str(pki.admin_key))
    wait_until(
        lambda: _get(f"{url}/readyz", context) == "ok",
        f"{name}'s kube-apiserver to be ready",
        timeout=START_TIMEOUT_S,
        supervisor=supervisor,
    )
    controller_manager = supervisor.start(
        f"{name}-kube-controller-manager",
        [
            tools.binary("kube-controller-manager"),
            f"--kubeconfig={admin}",
            f"--controllers={','.join(CONTROLLERS)}",
            f"--service-account-private-key-file={pki.service_account_key}",
            f"--root-ca-file={pki.ca_cert}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            "--secure-port=0",
        ],
    )
    cluster = TestCluster(name, url, pki, admin, tools, home, apiserver, controller_manager)
    wait_until(
        lambda: cluster.get("serviceaccount", "default", "default"),
        f"{name}'s controller manager to create the default ServiceAccount",
        timeout=START_TIMEOUT_S,
        supervisor=supervisor,
    )
    return cluster
