"""BootstrapConfig: a workspace's settings for onboarding new clusters (Flux and the agent).

One per workspace, named `default` (as Gardener's per-project config): what to install on a new
Cluster through its kubeconfig (Flux's chart, bundler's agent chart), and the agent mode to end in.
A Cluster overrides it with `spec.bootstrap` (bundler.api.cluster.ClusterBootstrap).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.cluster import AgentMode
from bundler.api.meta import Conditions, FreeForm, IntOrPercent, ObjectMeta

# The name of the BootstrapConfig a workspace's Clusters follow.
DEFAULT_BOOTSTRAP_CONFIG = "default"


class BootstrapChart(ApiModel):
    """A chart to install on the downstream cluster: repository (`https://` or `oci://`), chart,
    version or range (Flux resolves it; none: the latest stable release), values."""

    enabled: bool = True
    """false: the chart is not installed. Default true."""
    repo: str = Field(min_length=1)
    """The chart's repository: an https:// Helm repository or an oci:// registry (a Flux
    HelmRepository on the management cluster, type oci for oci://)."""
    chart: str = Field(min_length=1)
    """The chart's name in the repository."""
    version: str | None = None
    """Version or range, resolved by Flux on the management cluster (the HelmRelease's
    spec.chart.spec.version); unset: the latest stable release. A Cluster's spec.bootstrap
    overrides it."""
    values: FreeForm = Field(default_factory=dict)
    """Helm values of the release, as written (not templated)."""
    namespace: str = "flux-system"
    """Namespace of the release on the downstream cluster, created when missing. Default
    flux-system."""


class ManagementEndpoint(ApiModel):
    """The management API server as the downstream agent reaches it, and how it trusts it."""

    server: str = Field(min_length=1)
    """URL of the management cluster's API server as the downstream cluster reaches it, e.g.
    https://mgmt.example:6443."""
    caData: str | None = None
    """Base64 of the PEM CA certificates the agent trusts the server with, when the agent's
    token Secret carries no CA."""
    insecureSkipTLSVerify: bool = False
    """true: the agent does not verify the server's certificate (for tests only). Default
    false."""


class BootstrapRollout(ApiModel):
    """How a settings change reaches the clusters: at most `maxUnavailable` (a count or a
    percentage of the bootstrapped clusters; default 100%) bootstrap releases not Ready at once."""

    maxUnavailable: IntOrPercent | None = None
    """Most bootstrap releases of the workspace that may be not Ready at once while a change
    (a new version, new values) rolls out: a count, or a percentage of the bootstrapped clusters.
    Default 100%. A new cluster's releases are never held."""


class BootstrapConfigSpec(ApiModel):
    """What a new cluster gets installed, and the mode it ends in."""

    importedClusters: bool = True
    """true (default): Cluster API imports are bootstrapped unless their Cluster says
    spec.bootstrap.enabled: false. Other Clusters only when they say enabled: true."""
    flux: BootstrapChart | None = None
    """The Flux chart (e.g. flux2 of fluxcd-community), installed through the cluster's
    kubeconfig Secret by Flux on the management cluster; unset: bundler installs no Flux."""
    agent: BootstrapChart | None = None
    """bundler's agent chart, installed once Flux is Ready, with its identity (token, cluster
    namespace, management server) from a values Secret; unset: no pull agent is installed and
    the remote agent keeps deploying."""
    management: ManagementEndpoint | None = None
    """The management API server as the agent reaches it; needed to install the agent
    (AgentConnected=False, ManagementNotSet without it)."""
    mode: AgentMode = AgentMode.PULL
    """pull (default): the cluster ends in pull mode, with the agent installed. remote: Flux
    only; the remote agent on the management cluster keeps deploying."""
    rolloutStrategy: BootstrapRollout | None = None
    """How a settings change reaches the bootstrapped clusters."""


class BootstrapConfigStatus(ApiModel):
    """Reserved: each cluster's bootstrap progress is on its Cluster's conditions."""

    conditions: Conditions = Field(default_factory=list)
    """Not written by bundler at present; see the FluxInstalled, AgentConnected and Bootstrapped
    conditions of each Cluster. At most 32."""


class BootstrapConfig(ApiModel):
    """A workspace's settings for onboarding new clusters (with `bundler manager --bootstrap`):
    the Flux and agent charts installed through each Cluster's kubeconfig Secret, and the agent
    mode it ends in. Only the one named `default` is read; a Cluster overrides it in
    spec.bootstrap."""

    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    """The versioned schema of this object: bundler.dev/v1alpha1."""
    kind: Literal["BootstrapConfig"] = "BootstrapConfig"
    """The kind of this object: BootstrapConfig."""
    metadata: ObjectMeta
    spec: BootstrapConfigSpec = Field(default_factory=BootstrapConfigSpec)
    """What a new cluster gets installed, and the mode it ends in."""
    status: BootstrapConfigStatus | None = None
    """Reserved; bootstrap progress is on each Cluster."""
