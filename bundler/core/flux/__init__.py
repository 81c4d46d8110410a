"""What every Flux object an agent writes for a BundleDeployment shares: where it goes, its name
and its labels. The objects themselves are each delivery's (bundler.core.delivery); Helm's, a chart
source and a HelmRelease, are built by bundler.core.flux.helm_objects.

Every object carries `flux_labels(bd)`, which is how the agent finds what it wrote (and what to
delete when its BundleDeployment is gone: compare the label `bundler.dev/bundledeployment` with
`flux_labels(bd)` of the BundleDeployments that exist).

Names: the HelmRelease and its source are both named `release_object_name(<bundle name>)`. A
cluster only runs bundles of one workspace, so the bundle name is unique among its releases, and a
dependency's HelmRelease name follows from the dependency's bundle name alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.core.labels import (
    LABEL_BUNDLE_DEPLOYMENT,
    LABEL_BUNDLE_NAME,
    LABEL_BUNDLE_NAMESPACE,
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from bundler.core.naming import DNS1123_LABEL_MAX, HELM_RELEASE_NAME_MAX, shorten_name
from bundler.errors import InvalidInputError

DEFAULT_AGENT_NAMESPACE = "bundler-system"
# The key of a remote cluster's kubeconfig Secret (Cluster spec.kubeConfigSecret) Flux reads.
KUBECONFIG_SECRET_KEY = "value"

# BundleDeployment labels identifying the bundle and the cluster, copied onto the Flux objects.
_COPIED_LABELS = (LABEL_BUNDLE_NAMESPACE, LABEL_CLUSTER_NAME, LABEL_CLUSTER_NAMESPACE)


@dataclass(frozen=True, kw_only=True)
class FluxTarget:
    """Where and how the agent writes Flux objects.

    namespace: the agent's namespace on the downstream cluster (pull), or the cluster namespace on
      the management cluster (remote); the source and the HelmRelease live there.
    cluster: "<workspace>/<cluster name>", written as an annotation.
    kubeconfig_secret: remote mode only (ignored in pull mode): a Secret in `namespace` whose key
      `value` holds the downstream cluster's kubeconfig.
    registry_secret: a credentials Secret already in `namespace` for the source to use, or None.
    """

    namespace: str = DEFAULT_AGENT_NAMESPACE
    cluster: str
    mode: AgentMode = AgentMode.PULL
    kubeconfig_secret: str | None = None
    registry_secret: str | None = None


def remote_kubeconfig(target: FluxTarget, obj: str) -> str | None:
    """The kubeconfig Secret a workload object of `obj` names in remote mode (None in pull
    mode); InvalidInputError when a remote target has none."""
    if target.mode is not AgentMode.REMOTE:
        return None
    if not target.kubeconfig_secret:
        raise InvalidInputError(
            f"remote mode for cluster {target.cluster} needs the cluster's kubeconfig Secret "
            "(Cluster spec.kubeConfigSecret)",
            obj=obj,
        )
    return target.kubeconfig_secret


def release_object_name(bundle_name: str) -> str:
    """The name of the HelmRelease (and of its source) for a bundle: at most 63 characters."""
    return shorten_name(bundle_name, DNS1123_LABEL_MAX)


def helm_release_name(name: str) -> str:
    """A Helm release name within Helm's 53 characters, shortened deterministically."""
    return shorten_name(name, HELM_RELEASE_NAME_MAX)


def bundle_name(bd: BundleDeployment) -> str:
    """The bundle a BundleDeployment deploys: its bundle-name label, else its own name."""
    return bd.metadata.labels.get(LABEL_BUNDLE_NAME) or bd.metadata.name


def flux_labels(bd: BundleDeployment) -> dict[str, str]:
    """The labels every Flux object written for `bd` carries (values fit in 63 characters)."""
    labels = {
        LABEL_MANAGED_BY: MANAGED_BY_BUNDLER,
        LABEL_BUNDLE_NAME: bundle_name(bd),
        LABEL_BUNDLE_DEPLOYMENT: bd.metadata.name,
    }
    labels.update({k: bd.metadata.labels[k] for k in _COPIED_LABELS if bd.metadata.labels.get(k)})
    return {key: shorten_name(labels[key], DNS1123_LABEL_MAX) for key in sorted(labels)}
