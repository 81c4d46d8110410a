"""The labels and annotations bundler puts on the objects it writes; the agent and manager select on
them.
"""

from __future__ import annotations

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
