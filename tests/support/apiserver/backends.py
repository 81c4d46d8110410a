"""The two API servers the contract tests of tests/apiserver run against, behind one interface.

- `stand-in`: bundler's own ApiServer (bundler.apiserver), a fresh one per test, over HTTPS with
  a self-signed certificate made once per session. Its admin is its fixed admin token (group
  `system:masters`); a user's token is that of a service-account token Secret its token
  controller fills.
- `real`: one kube-apiserver per session, from the e2e harness (tests.support.e2e.controlplane:
  etcd, RBAC, real certificates, and kube-controller-manager, which fills token Secrets and
  finishes namespace deletions), with bundler's, Flux's, Cluster API's and the Widget CRDs
  installed. Its admin is the harness's client certificate (group `system:masters`); a user's
  token comes from the TokenRequest API, as `kubectl create token` gets one. It runs with
  `--anonymous-auth=false`, the setting the stand-in models (bundler.apiserver.authn).

Tests isolate by namespace (`create_namespace`), so they can share the real server; what a test
makes outside its namespace (ClusterRoles, their bindings) carries the namespace in its name.
"""

from __future__ import annotations

import json
import ssl
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bundler.apiserver import ApiServer
from bundler.store.protocol import Obj
from tests.support.apiserver.contract import (
    ACCOUNTS,
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    ROLES,
    SECRETS,
    TOKEN_SECRET_TYPE,
    Http,
    WatchReader,
    eventually,
    secret_token,
    widget_crd,
)
from tests.support.e2e import kubeconfigs
from tests.support.e2e.controlplane import TestCluster, start_cluster, start_etcd
from tests.support.e2e.processes import Supervisor
from tests.support.e2e.tools import find_tools
from tests.support.schemas import SCHEMAS_DIR

ROOT = Path(__file__).resolve().parents[3]
CAPI_CRD = SCHEMAS_DIR / "capi" / "clusters.yaml"
STAND_IN = "stand-in"
REAL = "real"
# What the stand-in leaves out of its model, so the real server the tests judge it by must too.
REAL_APISERVER_ARGS = ("--anonymous-auth=false",)
TOKEN_SECONDS = 6 * 3600


class Backend(ABC):
    """One API server as the contract tests use it: its URL and CA, admin clients, namespaces,
    users with given RBAC rules, kubeconfigs and watches."""

    name: str

    def __init__(self, url: str, ca_file: Path) -> None:
        self.url = url
        self.ca_file = ca_file

    @abstractmethod
    def admin(self, namespace: str = "") -> Http:
        """A client acting as a member of `system:masters`."""

    @abstractmethod
    def admin_headers(self) -> dict[str, str]:
        """What a raw HTTP request needs in its headers to be the admin."""

    @abstractmethod
    def token(self, account: str, namespace: str) -> str:
        """A bearer token of ServiceAccount `namespace/account` (which exists)."""

    @abstractmethod
    def kubeconfig(self, path: Path, namespace: str) -> Path:
        """An admin kubeconfig with `namespace` as its context's namespace."""

    def client(self, token: str | None, namespace: str = "") -> Http:
        """A client sending `token` (none: a request without credentials)."""
        return Http(self.url, namespace=namespace, token=token, verify=str(self.ca_file))

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def watch(
        self, path: str, *, headers: dict[str, str] | None = None, accept: str | None = None
    ) -> WatchReader:
        """A watch as the admin, unless `headers` say who is asking."""
        sent = self.admin_headers() if headers is None else headers
        return WatchReader(self.url, path, sent, self.ssl_context(), accept)

    def create_namespace(self, name: str) -> None:
        admin = self.admin()
        try:
            code, answer = admin.call("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        finally:
            admin.close()
        assert code == 201, answer

    def user(
        self,
        namespace: str,
        name: str,
        rules: Sequence[Obj] = (),
        cluster_rules: Sequence[Obj] = (),
    ) -> str:
        """The token of a new ServiceAccount `namespace/name`, allowed `rules` in its namespace
        (a Role and RoleBinding named `name`) and `cluster_rules` everywhere (a ClusterRole and
        ClusterRoleBinding named `namespace-name`)."""
        admin = self.admin(namespace)
        subject = [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]
        writes: list[tuple[str, Obj]] = [(ACCOUNTS, {"metadata": {"name": name}})]
        if rules:
            writes += [
                (ROLES, {"metadata": {"name": name}, "rules": list(rules)}),
                (ROLE_BINDINGS, _binding(name, "Role", name, subject)),
            ]
        if cluster_rules:
            cluster_name = f"{namespace}-{name}"
            writes += [
                (CLUSTER_ROLES, {"metadata": {"name": cluster_name}, "rules": list(cluster_rules)}),
                (
                    CLUSTER_ROLE_BINDINGS,
                    _binding(cluster_name, "ClusterRole", cluster_name, subject),
                ),
            ]
        try:
            for path, body in writes:
                code, answer = admin.call("POST", path, body)
                assert code == 201, answer
        finally:
            admin.close()
        return self.token(name, namespace)


def _binding(name: str, role_kind: str, role: str, subjects: list[Obj]) -> Obj:
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}
    return {"metadata": {"name": name}, "roleRef": ref, "subjects": subjects}


class StandIn(Backend):
    name = STAND_IN

    def __init__(self, server: ApiServer, certificate: Path) -> None:
        super().__init__(server.url, certificate)
        self.server = server

    def admin(self, namespace: str = "") -> Http:
        return self.client(self.server.admin_token, namespace)

    def admin_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.server.admin_token}"}

    def token(self, account: str, namespace: str) -> str:
        # The stand-in has no TokenRequest API: its tokens are those of token Secrets.
        admin = self.admin(namespace)
        secret = {
            "metadata": {
                "name": f"{account}-token",
                "annotations": {"kubernetes.io/service-account.name": account},
            },
            "type": TOKEN_SECRET_TYPE,
        }
        try:
            code, answer = admin.call("POST", SECRETS, secret)
            assert code == 201, answer
            return eventually(lambda: secret_token(admin, f"{account}-token"), "a token")
        finally:
            admin.close()

    def kubeconfig(self, path: Path, namespace: str) -> Path:
        return self.server.kubeconfig(path, namespace=namespace)


class Real(Backend):
    name = REAL

    def __init__(self, cluster: TestCluster) -> None:
        super().__init__(cluster.url, cluster.pki.ca_cert)
        self.cluster = cluster
        self._cert = (str(cluster.pki.admin_cert), str(cluster.pki.admin_key))

    def admin(self, namespace: str = "") -> Http:
        return Http(self.url, namespace=namespace, cert=self._cert, verify=str(self.ca_file))

    def admin_headers(self) -> dict[str, str]:
        return {}  # the admin is who the TLS client certificate says

    def ssl_context(self) -> ssl.SSLContext:
        context = super().ssl_context()
        context.load_cert_chain(*self._cert)
        return context

    def token(self, account: str, namespace: str) -> str:
        admin = self.admin(namespace)
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": TOKEN_SECONDS},
        }
        try:
            code, answer = admin.call("POST", f"{ACCOUNTS}/{account}/token", request)
        finally:
            admin.close()
        assert code == 201, answer
        token: str = answer["status"]["token"]
        return token

    def kubeconfig(self, path: Path, namespace: str) -> Path:
        pki = self.cluster.pki
        user = kubeconfigs.client_certificate_user(pki.admin_cert, pki.admin_key)
        config = kubeconfigs.kubeconfig(
            self.url, pki.ca_cert, user, name=self.cluster.name, namespace=namespace
        )
        return kubeconfigs.write(path, config)


@contextmanager
def real_cluster(workdir: Path) -> Iterator[TestCluster]:
    """etcd and one cluster of the e2e harness, with the CRDs the stand-in serves: bundler's,
    Flux's, Cluster API's, and the tests' Widget. Skips (fails in CI) without the built tools."""
    tools = find_tools()
    supervisor = Supervisor(workdir / "logs")
    try:
        etcd = start_etcd(supervisor, tools, workdir)
        cluster = start_cluster(
            supervisor, tools, etcd, workdir, "judged", apiserver_args=REAL_APISERVER_ARGS
        )
        widgets = workdir / "widgets.json"
        widgets.write_text(json.dumps(widget_crd()))
        cluster.install_crds(
            *sorted((ROOT / "crds").glob("*.yaml")), *tools.flux_crds, CAPI_CRD, widgets
        )
        yield cluster
    finally:
        supervisor.stop_all()
