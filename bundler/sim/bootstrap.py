"""The downstream side of the bootstrap in the simulator: what Kubernetes and the agent chart do.

- Kubernetes' token controller fills the agents' token Secrets (bundler.apiserver.tokens), so the
  manager can write each agent's values;
- once a Cluster's bootstrap agent HelmRelease is Ready (the simulated Flux on the management
  cluster "installed" the agent chart), its pull agent and Flux start, as the chart's Deployment
  would on the cluster.
"""

from __future__ import annotations

from collections.abc import Callable

from bundler.api.resources import HELM_RELEASE, SECRET
from bundler.apiserver.tokens import TokenController
from bundler.core.agent.identity import AGENT_TOKEN_MARK, LABEL_AGENT_TOKEN
from bundler.core.bootstrap import MANAGED_BY_BOOTSTRAP, Part, object_name, ready_condition
from bundler.core.labels import LABEL_CLUSTER_NAME, LABEL_MANAGED_BY
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.store.memory import MemoryStore

# Starts the pull agent of Cluster (workspace, name) once.
StartAgent = Callable[[str, str], None]


class BootstrapSide:
    def __init__(self, host: Host, store: MemoryStore, start_agent: StartAgent) -> None:
        self.host = host
        self._tokens = TokenController(store)
        self._token_secrets = host.informer(SECRET, None, {LABEL_AGENT_TOKEN: AGENT_TOKEN_MARK})
        managed = {LABEL_MANAGED_BY: MANAGED_BY_BOOTSTRAP}
        self._releases = host.informer(HELM_RELEASE, None, managed)
        self._start_agent = start_agent

    def start(self) -> None:
        tokens = self.host.add_controller("sim:tokens", self._fill_token)
        tokens.watch(self._token_secrets)
        agents = self.host.add_controller("sim:bootstrap", self._agent_installed)
        agents.watch(self._releases)

    def _fill_token(self, key: Key) -> None:
        secret = self._token_secrets.get(key.namespace, key.name)
        if secret is not None:
            self._tokens.fill(secret)

    def _agent_installed(self, key: Key) -> None:
        release = self._releases.get(key.namespace, key.name)
        if release is None:
            return
        cluster = (release["metadata"].get("labels") or {}).get(LABEL_CLUSTER_NAME, "")
        ready = ready_condition(release).get("status") == "True"
        if ready and key.name == object_name(cluster, Part.AGENT):
            self._start_agent(key.namespace, cluster)
