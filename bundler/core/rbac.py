"""The RBAC rules bundler needs, in one place: the manager's ClusterRole, the pull agent's rules (a
ClusterRole every agent shares, bound in each cluster namespace, and a Role per Cluster in its
workspace) and the remote agent's ClusterRole.

Pure data and builders, no I/O. The tests run every controller under exactly these rules against an
API server that enforces Kubernetes RBAC, and prove each rule necessary by removing it; a Helm
chart or `kubectl apply` can render the same objects from here.

Why the manager holds the agent's permissions: Kubernetes lets a user create a Role, or bind one,
only when the user holds every permission it grants, unless the user may `escalate` (Roles) or
`bind` (bindings). Either verb would let a compromised manager grant anything to anyone. Instead
the manager holds, cluster-wide, what it grants the agents (the BundleDeployment status rule of
MANAGER_RULES exists for that reason alone), so the API server itself checks that an agent's Role
can never exceed the manager's rights.

Why the agent may `get` Secrets but not list or watch them: the agent reads the Secrets a
BundleDeployment names (`spec.options.helm.secretRef`, `spec.options.managementValues[].secretName`)
by name, when it applies that deployment.
Kubernetes never authorizes list or watch through resourceNames, and keeping resourceNames in step
with the copies the manager makes would race with every new Bundle; `get` alone already keeps an
agent from discovering what its namespace holds. The cluster namespace of a pull-mode Cluster holds
only Secrets meant for that agent: the registry credentials and management values copied for its
deployments and its own token (the remote agent's kubeconfig copy is removed when the Cluster
leaves remote mode). A remote-mode Cluster has no pull agent identity that could read that copy
(the manager deletes it once the pull agent's handover is done).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bundler.api.resources import (
    BOOTSTRAP_CONFIG,
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CAPI_CLUSTER,
    CLUSTER,
    CLUSTER_GROUP,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    CONFIG_MAP,
    DEPLOYMENT,
    EVENT,
    FLUX_KINDS,
    HELM_RELEASE,
    HELM_REPOSITORY,
    JOB,
    LEASE,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SECRET,
    SERVICE_ACCOUNT,
    Resource,
)
from bundler.core.capi_import import CAPI_REFERENCE_GROUPS, CAPI_REFERENCE_KINDS
from bundler.core.delivery import Delivery
from bundler.core.delivery.registry import DELIVERIES
from bundler.core.shards import Shard

RBAC_GROUP = ROLE.group
MANAGER_NAME = "bundler-manager"
# The leader-election Lease (bundler.manager.options.LEASE_NAME).
MANAGER_LEASE = "bundler-manager"

READ = ("get", "list", "watch")
WRITE = ("create", "update", "delete")
STATUS = "status"

Obj = dict[str, Any]


@dataclass(frozen=True)
class PolicyRule:
    """One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    def to_dict(self) -> Obj:
        """The rule as Kubernetes writes it; empty lists are left out, as the API server does."""
        fields = {
            "apiGroups": self.api_groups,
            "resources": self.resources,
            "resourceNames": self.resource_names,
            "nonResourceURLs": self.non_resource_urls,
        }
        body: Obj = {"verbs": list(self.verbs)}
        body.update({key: list(value) for key, value in fields.items() if value})
        return body

    @classmethod
    def from_dict(cls, body: Obj) -> PolicyRule:
        return cls(
            verbs=tuple(body.get("verbs") or ()),
            api_groups=tuple(body.get("apiGroups") or ()),
            resources=tuple(body.get("resources") or ()),
            resource_names=tuple(body.get("resourceNames") or ()),
            non_resource_urls=tuple(body.get("nonResourceURLs") or ()),
        )


def rule(
    verbs: Iterable[str],
    kinds: Iterable[Resource],
    subresource: str | None = None,
    names: Iterable[str] = (),
) -> PolicyRule:
    """A rule over `kinds`, or over their `subresource`.

    Kubernetes grants every listed resource in every listed group: kinds of several groups share a
    rule only when their plurals do not name anything else in the other groups.
    """
    kinds = tuple(kinds)
    groups = tuple(dict.fromkeys(k.group for k in kinds))
    suffix = f"/{subresource}" if subresource else ""
    plurals = tuple(dict.fromkeys(f"{k.plural}{suffix}" for k in kinds))
    return PolicyRule(tuple(verbs), groups, plurals, tuple(names))


# The bootstrap (bundler.manager.controllers.bootstrap_controller): it reads the workspace's
# BootstrapConfig and writes the chart sources and remote HelmReleases that install Flux and the
# agent.
BOOTSTRAP_RULES: tuple[PolicyRule, ...] = (
    rule(READ, [BOOTSTRAP_CONFIG]),
    rule((*READ, "create", "update"), [HELM_RELEASE, HELM_REPOSITORY]),
)

# The Cluster API import reads the ControlPlane and InfraCluster a CAPI Cluster refers to
# (bundler.capi.references): by name, of the kinds Cluster API's providers define.
CAPI_REFERENCE_RULES: tuple[PolicyRule, ...] = tuple(
    PolicyRule(("get",), (group,), CAPI_REFERENCE_KINDS[group]) for group in CAPI_REFERENCE_GROUPS
)

# The ClusterRole of AGENT_NAMESPACE_RULES: each pull agent's RoleBinding in its cluster namespace
# grants it there only (the rules name nothing of one cluster, so one ClusterRole serves them all).
AGENT_NAMESPACE_ROLE = "bundler-agent"

# What the manager does on the management cluster; each rule names the code that needs it.
MANAGER_RULES: tuple[PolicyRule, ...] = (
    # cluster namespaces: watched, created, relabelled, deleted with their Cluster
    rule((*READ, *WRITE), [NAMESPACE]),
    # the manager's finalizer on Bundles
    rule((*READ, "update"), [BUNDLE]),
    # BundleDeployments written from the plan; finalizers on Clusters and Clusters imported from
    # Cluster API; forced cleanup of an import patches finalizers away
    rule((*READ, *WRITE, "patch"), [BUNDLE_DEPLOYMENT, CLUSTER]),
    # one ClusterGroup per ClusterClass (Cluster API import)
    rule((*READ, *WRITE), [CLUSTER_GROUP]),
    # the status roll-ups (the Cluster's is also what the agent's workspace Role grants)
    rule(("patch",), [BUNDLE, CLUSTER, CLUSTER_GROUP], STATUS),
    # only so that the manager may grant it to the agents (see the module docstring)
    rule(("patch",), [BUNDLE_DEPLOYMENT], STATUS),
    # registry credentials and management values read and copied into cluster namespaces; agent
    # token Secrets
    rule((*READ, *WRITE), [SECRET]),
    # management values from ConfigMaps (valuesFrom, source: Management): those labelled for
    # delivery watched, one named but not in that watch read
    rule(READ, [CONFIG_MAP]),
    # the pull agents' identities, deleted when their Cluster is in remote mode
    rule((*READ, *WRITE), [SERVICE_ACCOUNT]),
    rule((*READ, *WRITE), [ROLE, ROLE_BINDING]),
    # the ClusterRole every pull agent's RoleBinding grants in its cluster namespace, written at
    # the manager's start (create is never limited by name)
    rule(("create",), [CLUSTER_ROLE]),
    rule(("get", "update"), [CLUSTER_ROLE], names=[AGENT_NAMESPACE_ROLE]),
    # leader election (client-go's pattern: create is never limited by name)
    rule(("create",), [LEASE]),
    rule(("get", "update"), [LEASE], names=[MANAGER_LEASE]),
    # Cluster API import reads CAPI Clusters, and the objects they refer to
    rule(READ, [CAPI_CLUSTER]),
    *CAPI_REFERENCE_RULES,
    # forced cleanup of an import strips finalizers of bundler's Flux objects
    rule(("list", "patch"), FLUX_KINDS),
    # Events on Bundles and Clusters (bundler.manager.events): written once, never updated
    rule(("create",), [EVENT]),
    *BOOTSTRAP_RULES,
)


# What a Cluster's agent does in its cluster namespace on the management cluster (the ClusterRole
# AGENT_NAMESPACE_ROLE, granted in that namespace only by a RoleBinding there).
AGENT_NAMESPACE_RULES: tuple[PolicyRule, ...] = (
    rule(READ, [BUNDLE_DEPLOYMENT]),
    rule(("patch",), [BUNDLE_DEPLOYMENT], STATUS),
    rule(("get",), [SECRET]),
)


def delivery_rules(delivery: Delivery) -> tuple[PolicyRule, ...]:
    """What an agent does with the kinds of `delivery` (bundler.core.delivery): watched by label,
    created, updated and deleted (bundler.agent.writer); a workload object whose release is kept
    is patched to suspend before its deletion."""
    return (
        rule((*READ, *WRITE), delivery.sources),
        rule((*READ, *WRITE, "patch"), [delivery.workload]),
    )


# What a pull agent does on its own (downstream) cluster, in the namespace of its Flux objects
# (`bundler agent --namespace`, where the agent itself runs): the Secrets its sources and releases
# read, and every delivery's kinds (bundler.agent.caches OWNED_KINDS).
AGENT_DOWNSTREAM_RULES: tuple[PolicyRule, ...] = (
    rule((*READ, *WRITE), [SECRET]),
    *(r for delivery in DELIVERIES for r in delivery_rules(delivery)),
)


# Cluster-wide on the downstream cluster, read by name only: the objects the built-in health
# checks name (bundler.agent.health_checks), in whatever namespace a release puts them. Checks of
# other kinds need more (the agent chart's rbac.healthCheckRules).
AGENT_HEALTH_CHECK_RULES: tuple[PolicyRule, ...] = (
    rule(("get",), [DEPLOYMENT]),
    rule(("get",), [JOB]),
)


def agent_downstream_namespace_rules(namespace: str) -> tuple[PolicyRule, ...]:
    """Cluster-wide on the downstream cluster: the agent reads its own namespace `namespace` at
    every heartbeat, to create it when missing. Where the agent runs in it, reading suffices; a
    refusal would be tolerated, but logged by the API server at every heartbeat."""
    return (rule(("get",), [NAMESPACE], names=[namespace]),)


def agent_cluster_rules(cluster: str) -> tuple[PolicyRule, ...]:
    """What a Cluster's agent does in the workspace: its heartbeat on its own Cluster's status.

    The answer to that patch is the Cluster, so the heartbeat is also how a pull agent learns that
    its Cluster moved to remote mode (bundler.core.handover): no `get` on Clusters is needed."""
    return (rule(("patch",), [CLUSTER], STATUS, names=[cluster]),)


# What the remote-mode agent process (`bundler agent --mode remote`) does on the management cluster,
# for every remote Cluster of the workspaces it serves: it watches the Clusters and heartbeats their
# status, copies each kubeconfig Secret into the cluster namespace (and removes the copy when the
# Cluster leaves remote mode), and there writes the Flux objects of its BundleDeployments and their
# status.
REMOTE_AGENT_NAME = "bundler-remote-agent"
REMOTE_AGENT_RULES: tuple[PolicyRule, ...] = (
    rule(READ, [CLUSTER]),
    rule(("patch",), [CLUSTER, BUNDLE_DEPLOYMENT], STATUS),
    rule(READ, [BUNDLE_DEPLOYMENT]),
    rule((*READ, *WRITE), [SECRET]),
    # every delivery's kinds, workloads first; a kept release's workload is patched to suspend
    rule(
        (*READ, *WRITE, "patch"),
        dict.fromkeys(
            [d.workload for d in DELIVERIES] + [res for d in DELIVERIES for res in d.sources]
        ),
    ),
)


def shard_lease_rule(shard_count: int) -> PolicyRule:
    """Leader election of `shard_count` shards, each through its own Lease (bundler.core.shards)."""
    names = [Shard(index, shard_count).lease_name for index in range(shard_count)]
    return rule(("get", "update"), [LEASE], names=names)


def manager_rules(shard_count: int = 1) -> tuple[PolicyRule, ...]:
    """MANAGER_RULES, with the shards' Leases when the manager runs as `shard_count` shards."""
    if shard_count <= 1:
        return MANAGER_RULES
    return (*MANAGER_RULES, shard_lease_rule(shard_count))


def rules_body(rules: Iterable[PolicyRule]) -> list[Obj]:
    return [r.to_dict() for r in rules]


def manager_cluster_role(
    name: str = MANAGER_NAME, rules: Iterable[PolicyRule] = MANAGER_RULES
) -> Obj:
    """The manager's ClusterRole (`rules` replaceable, for tests that withhold one)."""
    return cluster_role(name, rules)


def cluster_role(name: str, rules: Iterable[PolicyRule]) -> Obj:
    return {
        "apiVersion": CLUSTER_ROLE.api_version,
        "kind": CLUSTER_ROLE.kind,
        "metadata": {"name": name},
        "rules": rules_body(rules),
    }


def service_account_subject(name: str, namespace: str) -> Obj:
    return {"kind": SERVICE_ACCOUNT.kind, "name": name, "namespace": namespace}


def cluster_role_binding(name: str, role: str, subjects: Iterable[Obj]) -> Obj:
    """A ClusterRoleBinding of the ClusterRole `role` to `subjects`."""
    return {
        "apiVersion": CLUSTER_ROLE_BINDING.api_version,
        "kind": CLUSTER_ROLE_BINDING.kind,
        "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": CLUSTER_ROLE.kind, "name": role},
        "subjects": list(subjects),
    }


def manager_cluster_role_binding(
    namespace: str, name: str = MANAGER_NAME, service_account: str = MANAGER_NAME
) -> Obj:
    """Binds the manager's ClusterRole `name` to its ServiceAccount in `namespace`."""
    return cluster_role_binding(name, name, [service_account_subject(service_account, namespace)])
