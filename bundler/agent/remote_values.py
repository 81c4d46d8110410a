"""Remote mode's reads on the downstream cluster: the `valuesFrom` objects, for their copies, and
the objects health checks name (`read`).

A remote agent's HelmReleases live on the management cluster, but the ConfigMaps and Secrets their
`valuesFrom` name live on the downstream cluster, in the agent namespace, as in pull mode
(bundler.core.flux.values_copies says why). `DownstreamValues` reads them there through the
Cluster's kubeconfig Secret - the credential Flux itself deploys with - opened once and opened again
when the Secret changes, and closed with the agent. Every read is bounded by the store's own
request timeouts.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from typing import Protocol

from bundler.agent.config import AgentConfig
from bundler.api.helm import ValuesKind
from bundler.api.resources import CONFIG_MAP, SECRET, Resource
from bundler.core.flux import KUBECONFIG_SECRET_KEY
from bundler.errors import TransientError
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj, Store


class OpenedStore(Protocol):
    """What the values reader needs of a store on the downstream cluster (a KubeStore)."""

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj: ...

    def close(self) -> None: ...


# Opens a store on a cluster from kubeconfig YAML; the second argument names where it came from.
StoreOpener = Callable[[str, str], OpenedStore]


class DownstreamValues:
    def __init__(self, management: Store, config: AgentConfig, opener: StoreOpener) -> None:
        self.management = management
        self.config = config
        self.opener = opener
        self._store: OpenedStore | None = None
        self._version: str | None = None
        self._lock = threading.Lock()

    @property
    def namespace(self) -> str:
        return self.config.agent_namespace

    def get(self, kind: str, name: str) -> Obj | None:
        """The object on the downstream cluster, None when it does not exist there."""
        res = SECRET if kind == ValuesKind.SECRET else CONFIG_MAP
        try:
            return self._downstream().get(res, name, self.namespace)
        except NotFound:
            return None

    def read(self, res: Resource, name: str, namespace: str | None) -> Obj | None:
        """Any object on the downstream cluster, None when it does not exist there."""
        try:
            return self._downstream().get(res, name, namespace)
        except NotFound:
            return None

    def _downstream(self) -> OpenedStore:
        """The store on the downstream cluster, for the kubeconfig Secret as it is now."""
        secret_name = self.config.kubeconfig_secret or ""
        where = f"Secret {self.config.workspace}/{secret_name}"
        try:
            secret = self.management.get(SECRET, secret_name, self.config.workspace)
        except NotFound:
            raise TransientError(
                "the kubeconfig Secret does not exist", obj=where, field="data.value"
            ) from None
        version = secret["metadata"].get("resourceVersion")
        with self._lock:
            if self._store is not None and version == self._version:
                return self._store
            encoded = (secret.get("data") or {}).get(KUBECONFIG_SECRET_KEY)
            if not isinstance(encoded, str):
                raise TransientError("has no kubeconfig under the key value", obj=where)
            if self._store is not None:
                self._store.close()
            self._store = self.opener(base64.b64decode(encoded).decode(), where)
            self._version = version
            return self._store

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
            self._store = None
