"""The Kubernetes resource kinds bundler reads and writes: group, version, plural, scope,
subresources.

Pure data, shared by the store backends (which route on it) and the core (which stamps
apiVersion/kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Verb(StrEnum):
    """A Kubernetes API verb, as RBAC and the API server's metrics name it (status writes are
    update and patch)."""

    GET = "get"
    LIST = "list"
    WATCH = "watch"
    CREATE = "create"
    UPDATE = "update"
    PATCH = "patch"
    DELETE = "delete"
    DELETE_COLLECTION = "deletecollection"


@dataclass(frozen=True)
class Resource:
    """One served kind: enough to build REST paths and to know which writes bump generation."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    status_subresource: bool = False
    # Writes ask the API server for strict field validation: a field the served schema lacks
    # (an older controller's CRD) refuses the write instead of being dropped silently.
    strict_fields: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}/{self.version}" if self.group else f"{self.plural}/v1"


GROUP = "bundler.dev"
VERSION = "v1alpha1"

BUNDLE = Resource(GROUP, VERSION, "Bundle", "bundles", status_subresource=True)
BUNDLE_DEPLOYMENT = Resource(
    GROUP, VERSION, "BundleDeployment", "bundledeployments", status_subresource=True
)
CLUSTER = Resource(GROUP, VERSION, "Cluster", "clusters", status_subresource=True)
CLUSTER_GROUP = Resource(GROUP, VERSION, "ClusterGroup", "clustergroups", status_subresource=True)
BOOTSTRAP_CONFIG = Resource(
    GROUP, VERSION, "BootstrapConfig", "bootstrapconfigs", status_subresource=True
)

NAMESPACE = Resource("", "v1", "Namespace", "namespaces", namespaced=False)
SECRET = Resource("", "v1", "Secret", "secrets")
CONFIG_MAP = Resource("", "v1", "ConfigMap", "configmaps")
SERVICE_ACCOUNT = Resource("", "v1", "ServiceAccount", "serviceaccounts")
ROLE = Resource("rbac.authorization.k8s.io", "v1", "Role", "roles")
ROLE_BINDING = Resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings")
CLUSTER_ROLE = Resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False)
CLUSTER_ROLE_BINDING = Resource(
    "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False
)
LEASE = Resource("coordination.k8s.io", "v1", "Lease", "leases")
# The manager tells transitions of Bundles and Clusters as core/v1 Events (bundler.core.events).
EVENT = Resource("", "v1", "Event", "events")

# What health checks read without an expression (bundler.core.health.BUILT_IN).
DEPLOYMENT = Resource("apps", "v1", "Deployment", "deployments")
JOB = Resource("batch", "v1", "Job", "jobs")

# Flux's kinds gain fields from release to release: bundler's writes are validated strictly.
HELM_RELEASE = Resource(
    "helm.toolkit.fluxcd.io",
    "v2",
    "HelmRelease",
    "helmreleases",
    status_subresource=True,
    strict_fields=True,
)
HELM_REPOSITORY = Resource(
    "source.toolkit.fluxcd.io",
    "v1",
    "HelmRepository",
    "helmrepositories",
    status_subresource=True,
    strict_fields=True,
)
OCI_REPOSITORY = Resource(
    "source.toolkit.fluxcd.io",
    "v1",
    "OCIRepository",
    "ocirepositories",
    status_subresource=True,
    strict_fields=True,
)
GIT_REPOSITORY = Resource(
    "source.toolkit.fluxcd.io",
    "v1",
    "GitRepository",
    "gitrepositories",
    status_subresource=True,
    strict_fields=True,
)
KUSTOMIZATION = Resource(
    "kustomize.toolkit.fluxcd.io",
    "v1",
    "Kustomization",
    "kustomizations",
    status_subresource=True,
    strict_fields=True,
)

CAPI_CLUSTER = Resource(
    "cluster.x-k8s.io", "v1beta2", "Cluster", "clusters", status_subresource=True
)
CAPI_CLUSTER_V1BETA1 = Resource(
    "cluster.x-k8s.io", "v1beta1", "Cluster", "clusters", status_subresource=True
)
# Served by `bundler dev`, so `kubectl apply -f crds/` works; the API server reads the schemas of
# the CRDs stored (bundler.apiserver.crd_schemas).
CUSTOM_RESOURCE_DEFINITION = Resource(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    namespaced=False,
    status_subresource=True,
)

BUNDLER_KINDS = (BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, CLUSTER_GROUP, BOOTSTRAP_CONFIG)
CORE_KINDS = (
    NAMESPACE,
    SECRET,
    CONFIG_MAP,
    SERVICE_ACCOUNT,
    ROLE,
    ROLE_BINDING,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    LEASE,
    EVENT,
)
FLUX_KINDS = (HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY, GIT_REPOSITORY, KUSTOMIZATION)
CAPI_KINDS = (CAPI_CLUSTER, CAPI_CLUSTER_V1BETA1)
ALL_KINDS = BUNDLER_KINDS + CORE_KINDS + FLUX_KINDS + CAPI_KINDS
