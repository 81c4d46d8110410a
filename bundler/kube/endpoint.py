"""Where a loaded kubeconfig points: the API server's URL and how the client trusts it.

Read from the client the kubeconfig loaded into, not from the YAML, so everything the official
loader understands (several files in $KUBECONFIG, relative CA paths, inline CA data, the in-cluster
service account) gives the same answer as the connection itself uses.
"""

from __future__ import annotations

import os
from pathlib import Path

from kubernetes.client import ApiClient

from bundler.core.agent.kubeconfig import ApiEndpoint
from bundler.errors import InvalidInputError
from bundler.kube.client import KUBECONFIG_ENV, default_client
from bundler.kube.store import KubeOptions, KubeStore


def load_store_and_endpoint(
    kubeconfig: str | None = None, context: str | None = None, options: KubeOptions | None = None
) -> tuple[KubeStore, ApiEndpoint]:
    """A store as `load_store` opens it, and the endpoint it talks to."""
    api = default_client(kubeconfig, context)
    path = kubeconfig or os.environ.get(KUBECONFIG_ENV)
    try:
        endpoint = endpoint_of(api, f"kubeconfig {path}" if path else "in-cluster config")
    except InvalidInputError:
        api.close()  # type: ignore[no-untyped-call]
        raise
    return KubeStore(api, options), endpoint


def endpoint_of(api: ApiClient, source: str) -> ApiEndpoint:
    """The server and the trust of a loaded client; errors name `source`."""
    config = api.configuration
    ca_path = config.ssl_ca_cert
    ca_pem = None
    if ca_path:
        try:
            ca_pem = Path(ca_path).read_bytes()
        except OSError as err:
            raise InvalidInputError(
                f"cannot read the certificate authority {ca_path}: {err.strerror}", obj=source
            ) from None
    return ApiEndpoint(server=config.host, ca_pem=ca_pem or None, insecure=not config.verify_ssl)
