"""An imported Cluster API cluster, deployed, and the same cluster being deleted: where the cleanup
tests start from."""

from __future__ import annotations

from bundler.api.resources import BUNDLE_DEPLOYMENT, CLUSTER, HELM_RELEASE, NAMESPACE
from bundler.capi.cleanup import IMPORT_FINALIZER
from bundler.core.agent.identity import namespace_object
from bundler.core.labels import LABEL_MANAGED_BY, MANAGED_BY_BUNDLER
from bundler.core.naming import cluster_namespace
from bundler.store.protocol import Obj
from tests.support.capi.capi_objects import WS, capi_cluster
from tests.support.capi.fleet import Fleet, create_capi

# Finalizers as the manager and Flux put them.
MANAGER_FINALIZER = "bundler.dev/cluster-cleanup"
FLUX_FINALIZER = "finalizers.fluxcd.io"


def deployed_import(fleet: Fleet, name: str = "eu-1") -> str:
    """An imported Cluster as the manager and a remote agent leave it: the manager's finalizer,
    the cluster namespace with a BundleDeployment and a HelmRelease carrying Flux's finalizer.
    Returns the cluster namespace."""
    create_capi(fleet, capi_cluster(name, initialized=True))
    cluster = fleet.wait_until(
        CLUSTER,
        name,
        lambda c: IMPORT_FINALIZER in (c["metadata"].get("finalizers") or []),
        "the imported Cluster with its finalizer",
    )
    finalizers = [*cluster["metadata"]["finalizers"], MANAGER_FINALIZER]
    fleet.store.patch(CLUSTER, name, {"metadata": {"finalizers": finalizers}}, WS)
    namespace = cluster_namespace(WS, name)
    fleet.store.create(NAMESPACE, namespace_object(WS, name))
    fleet.store.create(BUNDLE_DEPLOYMENT, _bundle_deployment(namespace))
    fleet.store.create(HELM_RELEASE, helm_release(namespace, name))
    return namespace


def _bundle_deployment(namespace: str) -> Obj:
    return {
        "metadata": {"name": "calico", "namespace": namespace},
        "spec": {"deploymentID": "s-1", "options": {"helm": {"chart": "tigera-operator"}}},
    }


def helm_release(namespace: str, cluster: str) -> Obj:
    return {
        "metadata": {
            "name": "calico",
            "namespace": namespace,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY_BUNDLER},
            "finalizers": [FLUX_FINALIZER],
        },
        "spec": {
            "interval": "10m",
            "chartRef": {"kind": "HelmChart", "name": "calico"},
            "kubeConfig": {"secretRef": {"name": f"{cluster}-kubeconfig"}},
        },
    }


def deleting(fleet: Fleet, name: str = "eu-1") -> Obj:
    """Wait until the Cluster is deleting and the importer's cleanup has seen it so."""
    found = fleet.wait_until(
        CLUSTER, name, lambda c: bool(c["metadata"].get("deletionTimestamp")), "deletion to start"
    )
    fleet.barrier()
    return found
