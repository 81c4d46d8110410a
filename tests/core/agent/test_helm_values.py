"""The agent chart's values: the same identity and trust as the agent's kubeconfig."""

from __future__ import annotations

import base64

import pytest

from bundler.core.agent.helm_values import agent_helm_values
from bundler.core.agent.kubeconfig import ApiEndpoint

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(
    ("endpoint", "trust"),
    [
        (ApiEndpoint("https://m:6443", ca_pem=CA), {"caData": base64.b64encode(CA).decode()}),
        (ApiEndpoint("https://m:6443", insecure=True), {"insecureSkipTLSVerify": True}),
        (ApiEndpoint("https://m:6443"), {}),
    ],
    ids=["ca", "insecure", "system-trust"],
)
def test_values_carry_server_trust_token_and_cluster_namespace(
    endpoint: ApiEndpoint, trust: dict[str, object]
) -> None:
    values = agent_helm_values(endpoint, "tok", "cluster-ws-a-123", "ws/a")
    assert values == {
        "cluster": "ws/a",
        "management": {
            "server": "https://m:6443",
            **trust,
            "token": "tok",
            "namespace": "cluster-ws-a-123",
        },
    }
