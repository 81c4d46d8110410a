"""The values of charts/bundler-agent for one Cluster's pull agent: `bundler agent-kubeconfig
--helm-values`.

The same identity as the agent's kubeconfig (bundler.core.agent.kubeconfig): the Cluster it
serves, the management server as the agent reaches it and how it is trusted, the agent's token and
its cluster namespace; the chart writes the kubeconfig Secret from them. Pure: no I/O. The token
appears only in the returned values.
"""

from __future__ import annotations

import base64
from typing import Any

from bundler.core.agent.kubeconfig import ApiEndpoint

Obj = dict[str, Any]


def agent_helm_values(endpoint: ApiEndpoint, token: str, namespace: str, cluster_ref: str) -> Obj:
    """The `cluster` and `management` values of charts/bundler-agent for `cluster_ref`
    (`workspace/name`), whose agent reads `namespace` on the management cluster."""
    management: Obj = {"server": endpoint.server}
    if endpoint.ca_pem:
        management["caData"] = base64.b64encode(endpoint.ca_pem).decode("ascii")
    elif endpoint.insecure:
        management["insecureSkipTLSVerify"] = True
    management["token"] = token
    management["namespace"] = namespace
    return {"cluster": cluster_ref, "management": management}
