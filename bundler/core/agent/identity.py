"""The objects that give one Cluster's agent its own, narrow identity on the management cluster.

Per Cluster the manager keeps the cluster namespace, labelled with the Cluster it belongs to, and
for a pull-mode Cluster (`agent_identity`; a remote-mode Cluster has none of it once any pull
agent's handover is done, bundler.core.handover.pull_identity_step):
- ServiceAccount `bundler-agent` there, the identity the agent authenticates as;
- Secret `bundler-agent-token` there, of type `kubernetes.io/service-account-token`: Kubernetes'
  token controller fills it with that ServiceAccount's token and the cluster's CA, which
  `bundler agent-kubeconfig` turns into the pull-mode agent's kubeconfig. The manager owns its
  type, annotation and labels, never its data, and writes it last: a token never exists before
  the Roles and bindings that give it its rights;
- RoleBinding `bundler-agent` there, of the ClusterRole `bundler-agent` (`agent_namespace_role`,
  one for every agent, written by the manager at its start): read BundleDeployments, patch their
  status, get Secrets by name (the registry credentials copied into the namespace). A RoleBinding
  grants a ClusterRole in its own namespace only: nothing in any other namespace;
- Role `bundler-agent-<cluster>` in the workspace, limited by resourceNames to its own Cluster:
  patch its status (the agent's heartbeat), and nothing else of the workspace; and its RoleBinding
  to that ServiceAccount (the rules themselves are in bundler.core.rbac).

Managers before the shared ClusterRole made a Role `bundler-agent` in each cluster namespace
(`retired_identity`): once the RoleBinding there names the ClusterRole, the manager deletes that
Role, at that name and only while it carries the Cluster's labels.

Every object carries bundler's managed-by label and the cluster labels, so the manager can watch
exactly these objects and map each back to its Cluster. Pure builders: no I/O.

Kubernetes changes some fields only by recreating the object (`must_recreate`): a Secret's type, a
RoleBinding's roleRef, and the ServiceAccount a token was minted for (the token controller never
re-mints a filled token).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bundler.api.resources import (
    CLUSTER,
    CLUSTER_ROLE,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SECRET,
    SERVICE_ACCOUNT,
    Resource,
)
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from bundler.core.naming import DNS1123_SUBDOMAIN_MAX, cluster_namespace, shorten_name
from bundler.core.rbac import (
    AGENT_NAMESPACE_ROLE,
    AGENT_NAMESPACE_RULES,
    RBAC_GROUP,
    PolicyRule,
    agent_cluster_rules,
    cluster_role,
    rules_body,
)

AGENT_NAME = "bundler-agent"

AGENT_TOKEN_SECRET = f"{AGENT_NAME}-token"
SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token"
ANNOTATION_SERVICE_ACCOUNT_NAME = "kubernetes.io/service-account.name"
ANNOTATION_SERVICE_ACCOUNT_UID = "kubernetes.io/service-account.uid"
# The keys Kubernetes' token controller fills in a service-account token Secret.
TOKEN_KEY = "token"
CA_KEY = "ca.crt"
# Marks the token Secret, so the manager watches it apart from the credentials it copies.
LABEL_AGENT_TOKEN = "bundler.dev/agent-token"
AGENT_TOKEN_MARK = "true"

# What Kubernetes will not change in place, per kind: a difference means delete and create again.
_IMMUTABLE_FIELDS: dict[Resource, tuple[str, ...]] = {SECRET: ("type",), ROLE_BINDING: ("roleRef",)}
_IMMUTABLE_ANNOTATIONS: dict[Resource, tuple[str, ...]] = {
    SECRET: (ANNOTATION_SERVICE_ACCOUNT_NAME,)
}

Obj = dict[str, Any]


@dataclass(frozen=True)
class IdentityObject:
    """One object of an agent identity: its kind and its desired body."""

    res: Resource
    body: Obj

    @property
    def name(self) -> str:
        name: str = self.body["metadata"]["name"]
        return name

    @property
    def namespace(self) -> str | None:
        namespace: str | None = self.body["metadata"].get("namespace")
        return namespace


def identity_labels(workspace: str, cluster: str) -> dict[str, str]:
    return {
        LABEL_MANAGED_BY: MANAGED_BY_BUNDLER,
        LABEL_CLUSTER_NAME: cluster,
        LABEL_CLUSTER_NAMESPACE: workspace,
    }


def workspace_role_name(cluster: str) -> str:
    """The name of the Role in the workspace that lets one cluster's agent write its status."""
    return shorten_name(f"{AGENT_NAME}-{cluster}", DNS1123_SUBDOMAIN_MAX)


def namespace_object(workspace: str, cluster: str) -> Obj:
    return {
        "apiVersion": NAMESPACE.api_version,
        "kind": NAMESPACE.kind,
        "metadata": {
            "name": cluster_namespace(workspace, cluster),
            "labels": identity_labels(workspace, cluster),
        },
    }


def agent_identity(
    workspace: str, cluster: str, cluster_uid: str | None = None
) -> tuple[IdentityObject, ...]:
    """The namespace-scoped identity objects of one Cluster's agent, in creation order.

    The workspace Role and RoleBinding are owned by the Cluster (`cluster_uid`), so the garbage
    collector removes them with it even if the manager is not running.
    """
    namespace = cluster_namespace(workspace, cluster)
    labels = identity_labels(workspace, cluster)
    ws_role = workspace_role_name(cluster)
    owner = _owner(cluster, cluster_uid)
    shared = (CLUSTER_ROLE, AGENT_NAMESPACE_ROLE)
    return (
        IdentityObject(SERVICE_ACCOUNT, _object(SERVICE_ACCOUNT, AGENT_NAME, namespace, labels)),
        IdentityObject(ROLE_BINDING, _binding(AGENT_NAME, namespace, labels, shared, namespace)),
        IdentityObject(
            ROLE, _role(ws_role, workspace, labels, agent_cluster_rules(cluster), owner)
        ),
        IdentityObject(
            ROLE_BINDING, _binding(ws_role, workspace, labels, (ROLE, ws_role), namespace, owner)
        ),
        # Last: a token never exists before the rights it carries.
        IdentityObject(SECRET, _token_secret(namespace, labels)),
    )


def agent_namespace_role() -> Obj:
    """The ClusterRole every pull agent's RoleBinding grants in its cluster namespace."""
    role = cluster_role(AGENT_NAMESPACE_ROLE, AGENT_NAMESPACE_RULES)
    role["metadata"]["labels"] = {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER}
    return role


def retired_identity(workspace: str, cluster: str) -> tuple[IdentityObject, ...]:
    """What older managers made for a Cluster's agent and this one deletes: the Role of
    AGENT_NAMESPACE_RULES in the cluster namespace."""
    namespace = cluster_namespace(workspace, cluster)
    labels = identity_labels(workspace, cluster)
    return (IdentityObject(ROLE, _role(AGENT_NAME, namespace, labels, AGENT_NAMESPACE_RULES)),)


def must_recreate(wanted: IdentityObject, observed: Obj) -> bool:
    """Whether `observed` differs from `wanted` where only deleting and creating it again helps."""
    fields = _IMMUTABLE_FIELDS.get(wanted.res, ())
    if any(observed.get(f) != wanted.body.get(f) for f in fields):
        return True
    wanted_notes = wanted.body["metadata"].get("annotations") or {}
    notes = observed.get("metadata", {}).get("annotations") or {}
    return any(
        notes.get(a) != wanted_notes.get(a) for a in _IMMUTABLE_ANNOTATIONS.get(wanted.res, ())
    )


def is_identity_object(wanted: IdentityObject, observed: Obj) -> bool:
    """Whether `observed`, found at `wanted`'s place, carries the labels the manager gives it
    (so it is the manager's, for this Cluster)."""
    labels = observed.get("metadata", {}).get("labels") or {}
    wanted_labels: dict[str, str] = wanted.body["metadata"]["labels"]
    return all(labels.get(k) == v for k, v in wanted_labels.items())


def _token_secret(namespace: str, labels: dict[str, str]) -> Obj:
    """The agent's token Secret as the manager writes it: no data, the token controller fills it."""
    secret = _object(
        SECRET, AGENT_TOKEN_SECRET, namespace, {**labels, LABEL_AGENT_TOKEN: AGENT_TOKEN_MARK}
    )
    secret["metadata"]["annotations"] = {ANNOTATION_SERVICE_ACCOUNT_NAME: AGENT_NAME}
    secret["type"] = SERVICE_ACCOUNT_TOKEN_TYPE
    return secret


def _role(
    name: str,
    namespace: str,
    labels: dict[str, str],
    rules: Iterable[PolicyRule],
    owners: list[Obj] | None = None,
) -> Obj:
    return {**_object(ROLE, name, namespace, labels, owners), "rules": rules_body(rules)}


def _owner(cluster: str, uid: str | None) -> list[Obj]:
    if uid is None:
        return []
    return [{"apiVersion": CLUSTER.api_version, "kind": CLUSTER.kind, "name": cluster, "uid": uid}]


def _object(
    res: Resource,
    name: str,
    namespace: str,
    labels: dict[str, str],
    owners: list[Obj] | None = None,
) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if owners:
        meta["ownerReferences"] = owners
    return {"apiVersion": res.api_version, "kind": res.kind, "metadata": meta}


def _binding(
    name: str,
    namespace: str,
    labels: dict[str, str],
    role: tuple[Resource, str],
    subject_namespace: str,
    owners: list[Obj] | None = None,
) -> Obj:
    kind, role_name = role
    return {
        **_object(ROLE_BINDING, name, namespace, labels, owners),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": kind.kind, "name": role_name},
        "subjects": [
            {"kind": SERVICE_ACCOUNT.kind, "name": AGENT_NAME, "namespace": subject_namespace}
        ],
    }
