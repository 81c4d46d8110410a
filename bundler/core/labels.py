"""The labels and annotations bundler puts on the objects it writes; the agent and manager select on
them.
"""

from __future__ import annotations

from collections.abc import Mapping

LABEL_BUNDLE_NAME = "bundler.dev/bundle-name"
LABEL_BUNDLE_NAMESPACE = "bundler.dev/bundle-namespace"
LABEL_CLUSTER_NAME = "bundler.dev/cluster-name"
LABEL_CLUSTER_NAMESPACE = "bundler.dev/cluster-namespace"
LABEL_MANAGED_BY = "bundler.dev/managed-by"
MANAGED_BY_BUNDLER = "bundler"
LABEL_BUNDLE_DEPLOYMENT = "bundler.dev/bundledeployment"
ANNOTATION_DEPLOYMENT_ID = "bundler.dev/deployment-id"
ANNOTATION_CLUSTER = "bundler.dev/cluster"

# Cluster API import (bundler.core.capi_import): opt-in, the ClusterClass label, the gate, and the
# marker on the ClusterGroups the importer writes per ClusterClass.
LABEL_IMPORT = "bundler.dev/import"
IMPORT_ENABLED = "true"
IMPORT_DISABLED = "false"
LABEL_CLUSTER_CLASS = "bundler.dev/cluster-class"
ANNOTATION_IMPORT_GATE = "bundler.dev/import-gate"
ANNOTATION_AGENT_MODE = "bundler.dev/agent-mode"
MANAGED_BY_CAPI_IMPORT = "bundler-capi-import"
# Set on a Cluster the bootstrap switched to its final mode: the importer leaves agentMode be.
ANNOTATION_BOOTSTRAP_MODE = "bundler.dev/bootstrap-mode"


def is_cluster_namespace_of(labels: Mapping[str, str] | None, workspace: str, cluster: str) -> bool:
    """Whether a namespace's `labels` mark it as the cluster namespace bundler made for Cluster
    `workspace/cluster`: managed by bundler, naming that workspace and that cluster.

    A namespace's name alone is no proof (anyone may create or name one): bundler deletes, strips
    or copies into a cluster namespace only when its labels say it is that Cluster's.
    """
    found = labels or {}
    return (
        found.get(LABEL_MANAGED_BY) == MANAGED_BY_BUNDLER
        and found.get(LABEL_CLUSTER_NAMESPACE) == workspace
        and found.get(LABEL_CLUSTER_NAME) == cluster
    )
