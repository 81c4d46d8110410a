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
    repo: str = Field(min_length=1)
    chart: str = Field(min_length=1)
    version: str | None = None
    values: FreeForm = Field(default_factory=dict)
    namespace: str = "flux-system"


class ManagementEndpoint(ApiModel):
    """The management API server as the downstream agent reaches it, and how it trusts it."""

    server: str = Field(min_length=1)
    caData: str | None = None
    insecureSkipTLSVerify: bool = False


class BootstrapRollout(ApiModel):
    """How a settings change reaches the clusters: at most `maxUnavailable` (a count or a
    percentage of the bootstrapped clusters; default 100%) bootstrap releases not Ready at once."""

    maxUnavailable: IntOrPercent | None = None


class BootstrapConfigSpec(ApiModel):
    # Cluster API imports are bootstrapped unless their Cluster says
    # `spec.bootstrap.enabled: false`; other Clusters only when they say `enabled: true`.
    importedClusters: bool = True
    flux: BootstrapChart | None = None
    agent: BootstrapChart | None = None
    management: ManagementEndpoint | None = None
    mode: AgentMode = AgentMode.PULL
    rolloutStrategy: BootstrapRollout | None = None


class BootstrapConfigStatus(ApiModel):
    conditions: Conditions = Field(default_factory=list)


class BootstrapConfig(ApiModel):
    apiVersion: Literal["bundler.dev/v1alpha1"] = "bundler.dev/v1alpha1"
    kind: Literal["BootstrapConfig"] = "BootstrapConfig"
    metadata: ObjectMeta
    spec: BootstrapConfigSpec = Field(default_factory=BootstrapConfigSpec)
    status: BootstrapConfigStatus | None = None
