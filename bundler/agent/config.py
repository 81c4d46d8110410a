"""Who one agent is and where it writes: its Cluster, its placement mode, namespaces and periods.

In pull mode the agent writes Flux objects into its own namespace on the downstream cluster
(default `bundler-system`). In remote mode it writes them into the cluster namespace on the
management cluster, where Flux deploys through the cluster's kubeconfig Secret copied there.
"""

from __future__ import annotations

from dataclasses import dataclass

from bundler.api.cluster import AgentMode
from bundler.core.flux import DEFAULT_AGENT_NAMESPACE, FluxTarget
from bundler.core.labels import (
    LABEL_CLUSTER_NAME,
    LABEL_CLUSTER_NAMESPACE,
    LABEL_MANAGED_BY,
    MANAGED_BY_BUNDLER,
)
from bundler.core.naming import (
    DNS1123_LABEL_MAX,
    cluster_namespace,
    is_dns1123_label,
    is_dns1123_subdomain,
    shorten_name,
)
from bundler.errors import InvalidInputError

DEFAULT_HEARTBEAT_INTERVAL = 60.0
DEFAULT_RESYNC_PERIOD = 600.0


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    """One agent. `kubeconfig_secret` (remote mode) names the Secret in the cluster namespace."""

    workspace: str
    cluster: str
    mode: AgentMode = AgentMode.PULL
    agent_namespace: str = DEFAULT_AGENT_NAMESPACE
    kubeconfig_secret: str | None = None
    heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL
    resync_period: float = DEFAULT_RESYNC_PERIOD

    def __post_init__(self) -> None:
        if self.heartbeat_interval <= 0 or self.resync_period <= 0:
            raise InvalidInputError(
                "heartbeat interval and resync period must be positive", obj=f"agent {self.ref}"
            )
        if self.mode is AgentMode.REMOTE and not self.kubeconfig_secret:
            raise InvalidInputError(
                "remote mode needs the cluster's kubeconfig Secret", obj=f"agent {self.ref}"
            )

    @property
    def ref(self) -> str:
        """`workspace/cluster`, as messages and annotations name the Cluster."""
        return f"{self.workspace}/{self.cluster}"

    @property
    def cluster_namespace(self) -> str:
        """Where the Cluster's BundleDeployments live on the management cluster."""
        return cluster_namespace(self.workspace, self.cluster)

    @property
    def flux_namespace(self) -> str:
        """Where Flux objects go: the agent namespace (pull) or the cluster namespace (remote)."""
        if self.mode is AgentMode.REMOTE:
            return self.cluster_namespace
        return self.agent_namespace

    def target(self, registry_secret: str | None = None) -> FluxTarget:
        return FluxTarget(
            namespace=self.flux_namespace,
            cluster=self.ref,
            mode=self.mode,
            kubeconfig_secret=self.kubeconfig_secret,
            registry_secret=registry_secret,
        )

    def owned_labels(self) -> dict[str, str]:
        """Labels on everything this agent writes downstream; its caches select on them."""
        return {
            LABEL_MANAGED_BY: MANAGED_BY_BUNDLER,
            LABEL_CLUSTER_NAMESPACE: shorten_name(self.workspace, DNS1123_LABEL_MAX),
            LABEL_CLUSTER_NAME: shorten_name(self.cluster, DNS1123_LABEL_MAX),
        }


def parse_cluster_ref(ref: str) -> tuple[str, str]:
    """`NS/NAME` into (workspace, cluster name)."""
    workspace, sep, name = ref.partition("/")
    if not sep or not is_dns1123_label(workspace) or not is_dns1123_subdomain(name):
        raise InvalidInputError(
            f"{ref!r} is not NAMESPACE/NAME (a namespace name, a slash, a Cluster name)",
            field="--cluster",
        )
    return workspace, name
