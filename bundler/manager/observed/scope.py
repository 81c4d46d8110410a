"""What the manager observes of one workspace (or of all namespaces): informers and indexes.

A Scope owns the host informers for the kinds the controllers read and the parsed indexes beside
them (bundler.manager.observed.indexes). So a reconcile never parses or scans more than it reads: a
bundle's deployments are one dict lookup, a cluster namespace's deployments another.

The workspace's Secrets are watched without a label selector, since a Bundle's `helm.secretRef`
may name any of them (and so may a `valuesFrom` entry with `source: Management`, to be told why it
is refused); most are nothing to bundler, and the routes ignore those cheaply (one lookup in the
index of the Secrets that Bundles name). ConfigMaps are only ever delivered as values, so only
those labelled for delivery (`bundler.dev/deliver: "true"`) are watched.
"""

from __future__ import annotations

import threading

from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    CLUSTER,
    CLUSTER_GROUP,
    CONFIG_MAP,
    NAMESPACE,
    ROLE,
    ROLE_BINDING,
    SECRET,
    SERVICE_ACCOUNT,
)
from bundler.core.agent.identity import AGENT_TOKEN_MARK, LABEL_AGENT_TOKEN
from bundler.core.handover import KUBECONFIG_COPY_MARK, LABEL_KUBECONFIG_COPY
from bundler.core.labels import (
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from bundler.core.management_values import DELIVER_MARK, LABEL_DELIVER
from bundler.core.selectors import selector_matches
from bundler.manager.observed.indexes import (
    AgentCheckIns,
    DeploymentIndex,
    LabelsFingerprint,
    Memberships,
    ModelIndex,
    ObjectUsers,
    ReadyNamespaces,
    identity_fingerprint,
    labels_fingerprint,
    named_config_maps,
    named_secrets,
    parse_cluster,
    parse_group,
)
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key


class Scope:
    """The informers and indexes of one workspace, or of every namespace (`workspace` None)."""

    def __init__(self, host: Host, workspace: str | None) -> None:
        self.workspace = workspace
        managed = {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER}
        if workspace is not None:
            managed[LABEL_CLUSTER_NAMESPACE] = workspace
        deployments_of = {LABEL_BUNDLE_NAMESPACE: workspace} if workspace else None
        self.bundles = host.informer(BUNDLE, workspace)
        self.clusters = host.informer(CLUSTER, workspace)
        self.groups = host.informer(CLUSTER_GROUP, workspace)
        self.deployments = host.informer(BUNDLE_DEPLOYMENT, None, deployments_of)
        self.secrets = host.informer(SECRET, workspace)
        self.config_maps = host.informer(CONFIG_MAP, workspace, {LABEL_DELIVER: DELIVER_MARK})
        self.namespaces = host.informer(NAMESPACE, None, managed)
        self.service_accounts = host.informer(SERVICE_ACCOUNT, None, managed)
        self.roles = host.informer(ROLE, None, managed)
        self.role_bindings = host.informer(ROLE_BINDING, None, managed)
        self.agent_tokens = host.informer(
            SECRET, None, {**managed, LABEL_AGENT_TOKEN: AGENT_TOKEN_MARK}
        )
        # The remote agent's kubeconfig copies: no pull identity is made beside one.
        self.kubeconfig_copies = host.informer(
            SECRET, None, {**managed, LABEL_KUBECONFIG_COPY: KUBECONFIG_COPY_MARK}
        )
        self.cluster_models: ModelIndex[Cluster] = ModelIndex(
            parse_cluster, lambda c: identity_fingerprint(c.metadata)
        )
        self.group_models: ModelIndex[ClusterGroup] = ModelIndex(
            parse_group, lambda g: identity_fingerprint(g.metadata)
        )
        self.deployment_models = DeploymentIndex()
        self.secret_users = ObjectUsers(named_secrets)
        self.config_map_users = ObjectUsers(named_config_maps)
        self.check_ins = AgentCheckIns()
        self.ready_namespaces = ReadyNamespaces()
        self._memberships: dict[tuple[str, LabelsFingerprint], Memberships] = {}
        self._memberships_version = (-1, -1)
        self._lock = threading.Lock()
        self.bundles.add_handler(self.secret_users.on_event)
        self.bundles.add_handler(self.config_map_users.on_event)
        self.clusters.add_handler(self.cluster_models.on_event)
        self.clusters.add_handler(self.check_ins.on_event)
        self.namespaces.add_handler(self.ready_namespaces.on_event)
        self.groups.add_handler(self.group_models.on_event)
        self.deployments.add_handler(self.deployment_models.on_event)

    def covers(self, namespace: str) -> bool:
        return self.workspace is None or self.workspace == namespace

    def informers(self) -> tuple[Informer, ...]:
        return (
            self.bundles,
            self.clusters,
            self.groups,
            self.deployments,
            self.secrets,
            self.config_maps,
            self.namespaces,
            self.service_accounts,
            self.roles,
            self.role_bindings,
            self.agent_tokens,
            self.kubeconfig_copies,
        )

    # -- reads the controllers share ------------------------------------------------------------

    def live_clusters(self, workspace: str) -> list[Cluster]:
        """The workspace's Clusters that are not being deleted."""
        return [
            c
            for c in self.cluster_models.in_namespace(workspace)
            if not c.metadata.deletionTimestamp
        ]

    def groups_in(self, workspace: str) -> list[ClusterGroup]:
        return [
            g for g in self.group_models.in_namespace(workspace) if not g.metadata.deletionTimestamp
        ]

    def namespace_ready(self, name: str) -> bool:
        """The cluster namespace exists and is not terminating: BundleDeployments can go there."""
        return name in self.ready_namespaces

    def keys_in(self, informer: Informer, workspace: str) -> list[Key]:
        return [k for k in informer.list_keys() if k.namespace == workspace]

    def groups_containing(self, cluster: Cluster) -> list[ClusterGroup]:
        workspace = cluster.metadata.namespace or ""
        return [
            g
            for g in self.groups_in(workspace)
            if selector_matches(g.spec.selector, cluster.metadata.labels)
        ]

    def memberships(self, cluster: Cluster) -> Memberships:
        """The groups that pick `cluster` (names and labels), cached until any group or cluster
        changes (so the memo never holds clusters that are gone or labels they no longer have)."""
        cache_key = (cluster.metadata.uid or "", labels_fingerprint(cluster.metadata.labels))
        version = (self.group_models.version, self.cluster_models.version)
        with self._lock:
            if version != self._memberships_version:
                self._memberships = {}
                self._memberships_version = version
            found = self._memberships.get(cache_key)
        if found is not None:
            return found
        computed = tuple(
            sorted(
                (g.metadata.name, labels_fingerprint(g.metadata.labels))
                for g in self.groups_containing(cluster)
            )
        )
        with self._lock:
            if version == self._memberships_version:
                self._memberships[cache_key] = computed
        return computed


class Scopes:
    """Every scope of a manager, looked up by workspace."""

    def __init__(self, scopes: list[Scope]) -> None:
        self.all = tuple(scopes)

    def of(self, workspace: str) -> Scope | None:
        return next((s for s in self.all if s.covers(workspace)), None)

    def informers(self) -> list[Informer]:
        return [i for s in self.all for i in s.informers()]
