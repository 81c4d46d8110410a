"""The identities controllers have in a real cluster, set up on a test API server by its admin.

- The manager: ServiceAccount `bundler-manager` in `bundler-system`, bound by a ClusterRoleBinding
  to a ClusterRole holding exactly bundler.core.rbac.MANAGER_RULES (or the rules a test gives), and
  a kubeconfig with that ServiceAccount's token.
- The remote-mode agent: ServiceAccount `bundler-remote-agent` there, bound likewise to
  REMOTE_AGENT_RULES.
- A pull agent: the kubeconfig `bundler agent-kubeconfig` prints for its Cluster (the command run
  as the admin, against a manager that has set the identity up).
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterable
from pathlib import Path

from bundler.api.resources import (
    CLUSTER,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    NAMESPACE,
    ROLE,
    SECRET,
    SERVICE_ACCOUNT,
    Resource,
)
from bundler.apiserver import ApiServer
from bundler.cli import main
from bundler.core.agent.identity import (
    AGENT_NAME,
    ANNOTATION_SERVICE_ACCOUNT_NAME,
    SERVICE_ACCOUNT_TOKEN_TYPE,
    TOKEN_KEY,
    agent_identity,
    agent_namespace_role,
    namespace_object,
)
from bundler.core.naming import cluster_namespace
from bundler.core.rbac import (
    MANAGER_NAME,
    MANAGER_RULES,
    REMOTE_AGENT_NAME,
    REMOTE_AGENT_RULES,
    PolicyRule,
    cluster_role,
    cluster_role_binding,
    service_account_subject,
)
from bundler.kube.store import KubeStore
from bundler.store.errors import AlreadyExists
from bundler.store.protocol import Obj, Store

MANAGER_NAMESPACE = "bundler-system"
MANAGER_USER = f"system:serviceaccount:{MANAGER_NAMESPACE}:{MANAGER_NAME}"
REMOTE_AGENT_USER = f"system:serviceaccount:{MANAGER_NAMESPACE}:{REMOTE_AGENT_NAME}"
# How long `bundler agent-kubeconfig` waits for the manager to issue the agent's token.
AGENT_TOKEN_WAIT = "20"


def admin_store(server: ApiServer, directory: Path) -> KubeStore:
    """A store on `server` as its admin (system:masters); the caller closes it."""
    return KubeStore.from_kubeconfig(server.kubeconfig(directory / "admin.kubeconfig"), None)


def manager_kubeconfig(
    server: ApiServer, directory: Path, rules: Iterable[PolicyRule] = MANAGER_RULES
) -> Path:
    """A kubeconfig for the manager's ServiceAccount, bound to exactly `rules`."""
    return service_account_kubeconfig(server, directory, MANAGER_NAME, rules)


def remote_agent_kubeconfig(
    server: ApiServer, directory: Path, rules: Iterable[PolicyRule] = REMOTE_AGENT_RULES
) -> Path:
    """A kubeconfig for the remote-mode agent's ServiceAccount, bound to exactly `rules`."""
    return service_account_kubeconfig(server, directory, REMOTE_AGENT_NAME, rules)


def service_account_kubeconfig(
    server: ApiServer, directory: Path, name: str, rules: Iterable[PolicyRule]
) -> Path:
    """A kubeconfig for ServiceAccount `name` in bundler-system, bound to a ClusterRole `name`
    with `rules`; created by the admin (again: the same objects are reused)."""
    with admin_store(server, directory) as admin:
        for res, body in _service_account_objects(name, tuple(rules)):
            with contextlib.suppress(AlreadyExists):
                admin.create(res, body)
        token = service_account_token(admin, MANAGER_NAMESPACE, f"{name}-token")
    return server.kubeconfig(directory / f"{name}.kubeconfig", token=token)


def service_account_token(store: Store, namespace: str, secret: str) -> str:
    """The token the server's token controller put into a service-account token Secret."""
    data = store.get(SECRET, secret, namespace).get("data") or {}
    return base64.b64decode(data[TOKEN_KEY]).decode()


def agent_kubeconfig(server: ApiServer, directory: Path, workspace: str, cluster: str) -> Path:
    """The kubeconfig `bundler agent-kubeconfig` writes for Cluster `workspace/cluster`."""
    output = directory / f"agent-{workspace}-{cluster}.kubeconfig"
    admin = server.kubeconfig(directory / "admin.kubeconfig")
    argv = ["agent-kubeconfig", "--cluster", f"{workspace}/{cluster}", "--kubeconfig", str(admin)]
    code = main([*argv, "--output", str(output), "--wait", AGENT_TOKEN_WAIT])
    assert code == 0, f"bundler agent-kubeconfig failed for {workspace}/{cluster}"
    return output


def agent_user(workspace: str, cluster: str) -> str:
    return f"system:serviceaccount:{cluster_namespace(workspace, cluster)}:{AGENT_NAME}"


def agent_identity_by_hand(
    server: ApiServer,
    directory: Path,
    workspace: str,
    cluster: str,
    without: PolicyRule | None = None,
) -> Path:
    """What the manager does for a Cluster's agent, done by the admin (for tests without a
    manager), its Roles and ClusterRole `without` one rule if told; then the kubeconfig `bundler
    agent-kubeconfig` writes for it."""
    with admin_store(server, directory) as admin:
        with contextlib.suppress(AlreadyExists):
            admin.create(NAMESPACE, namespace_object(workspace, cluster))
        shared = (CLUSTER_ROLE, agent_namespace_role())
        for res, body in (shared, *((w.res, w.body) for w in agent_identity(workspace, cluster))):
            if res in (ROLE, CLUSTER_ROLE) and without is not None:
                kept = [r for r in body["rules"] if PolicyRule.from_dict(r) != without]
                body = {**body, "rules": kept}
            with contextlib.suppress(AlreadyExists):
                admin.create(res, body)
        status = {"status": {"namespace": cluster_namespace(workspace, cluster)}}
        admin.patch_status(CLUSTER, cluster, status, workspace)
    return agent_kubeconfig(server, directory, workspace, cluster)


def _service_account_objects(
    name: str, rules: tuple[PolicyRule, ...]
) -> list[tuple[Resource, Obj]]:
    token_secret = {
        "metadata": {
            "name": f"{name}-token",
            "namespace": MANAGER_NAMESPACE,
            "annotations": {ANNOTATION_SERVICE_ACCOUNT_NAME: name},
        },
        "type": SERVICE_ACCOUNT_TOKEN_TYPE,
    }
    return [
        (NAMESPACE, {"metadata": {"name": MANAGER_NAMESPACE}}),
        (SERVICE_ACCOUNT, {"metadata": {"name": name, "namespace": MANAGER_NAMESPACE}}),
        (SECRET, token_secret),
        (CLUSTER_ROLE, cluster_role(name, rules)),
        (
            CLUSTER_ROLE_BINDING,
            cluster_role_binding(name, name, [service_account_subject(name, MANAGER_NAMESPACE)]),
        ),
    ]
