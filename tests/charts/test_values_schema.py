"""Each chart's values.schema.json rejects bad values with a message naming the field, as Helm
enforces it (helm-python-sdk), and accepts what the charts document.

Helm checks the user's values merged over the chart's defaults: a default is removed by setting it
to null, which is how a user would drop the resource limits.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.charts.rendering import (
    AGENT_CHART,
    AGENT_REQUIRED,
    MANAGER_CHART,
    Obj,
    helm,
    schema_errors,
)

MANAGER_REJECTED: list[tuple[Obj, str, str]] = [
    ({"replicas": 0}, "/replicas", "no-replicas"),
    ({"replicas": "2"}, "/replicas", "replicas-as-string"),
    (
        {
            "replicas": 3,
            "leaderElection": {
                "enabled": False,
                "leaseDuration": 15,
                "renewDeadline": 10,
                "retryPeriod": 2,
            },
        },
        "/leaderElection/enabled",
        "replicas-without-leader-election",
    ),
    ({"leaderElection": {"leaseDuration": None}}, "/leaderElection", "election-lease-removed"),
    ({"logFormat": "xml"}, "/logFormat", "unknown-log-format"),
    ({"capiImport": "sometimes"}, "/capiImport", "unknown-capi-import"),
    ({"workspaces": ["Team_A"]}, "/workspaces/0", "workspace-not-a-namespace"),
    ({"workspaces": ["a", "a"]}, "/workspaces", "duplicate-workspace"),
    ({"resources": {"limits": None}}, "/resources", "limits-removed"),
    (
        {"resources": {"requests": {"cpu": "lots"}, "limits": {}}},
        "/resources/requests/cpu",
        "bad-quantity",
    ),
    ({"metrics": {"enabled": True, "port": 80}}, "/metrics/port", "privileged-port"),
    (
        {"image": {"repository": "r", "pullPolicy": "Sometimes"}},
        "/image/pullPolicy",
        "bad-pull-policy",
    ),
    (
        {"image": {"repository": "r", "pullPolicy": "Always", "digest": "latest"}},
        "/image/digest",
        "digest-not-sha256",
    ),
    ({"replica": 2}, "additional properties 'replica'", "typo-at-top-level"),
    (
        {"metrics": {"enabled": True, "port": 8080, "serviceMonitor": {"enable": True}}},
        "additional properties 'enable'",
        "typo-nested",
    ),
    ({"extraEnv": [{"value": "x"}]}, "/extraEnv/0", "env-without-name"),
    ({"kubeAPI": {"qps": 0, "burst": 1}}, "/kubeAPI/qps", "zero-qps"),
    ({"remoteAgent": {"workers": 0}}, "/remoteAgent/workers", "remote-agent-without-workers"),
    ({"shards": 0}, "/shards", "no-shards"),
    ({"shards": "3"}, "/shards", "shards-as-string"),
]

AGENT_REJECTED: list[tuple[Obj, str, str]] = [
    ({}, "/cluster", "no-cluster"),
    ({**AGENT_REQUIRED, "cluster": "prod-eu-1"}, "/cluster", "cluster-without-workspace"),
    ({"cluster": "ws/c", "management": {}}, "/management", "no-way-to-the-management-cluster"),
    (
        {"cluster": "ws/c", "management": {"server": "https://m:6443"}},
        "/management",
        "server-without-token",
    ),
    (
        {"cluster": "ws/c", "management": {"server": "mgmt:6443", "token": "t"}},
        "/management/server",
        "server-not-a-url",
    ),
    (
        {**AGENT_REQUIRED, "management": {**AGENT_REQUIRED["management"], "caData": "-----BEGIN"}},
        "/management/caData",
        "ca-not-base64",
    ),
    (
        {**AGENT_REQUIRED, "replicas": 2},
        "additional properties 'replicas'",
        "agent-has-no-replicas",
    ),
    ({**AGENT_REQUIRED, "heartbeatInterval": 0}, "/heartbeatInterval", "zero-heartbeat"),
]


def _cases(chart: Any, cases: list[tuple[Obj, str, str]]) -> list[Any]:
    return [
        pytest.param(chart, values, where, id=f"{chart.name}-{id_}") for values, where, id_ in cases
    ]


@pytest.mark.parametrize(
    ("chart", "values", "where"),
    [*_cases(MANAGER_CHART, MANAGER_REJECTED), *_cases(AGENT_CHART, AGENT_REJECTED)],
)
def test_schema_rejects_bad_values_naming_the_field(chart: Any, values: Obj, where: str) -> None:
    errors = schema_errors(chart, values)
    assert errors is not None, "accepted"
    assert where in errors


@pytest.mark.parametrize(
    ("chart", "values"),
    [
        pytest.param(MANAGER_CHART, {}, id="bundler-defaults"),
        pytest.param(
            MANAGER_CHART,
            {"podDisruptionBudget": {"maxUnavailable": "50%"}},
            id="bundler-percent-budget",
        ),
        pytest.param(AGENT_CHART, AGENT_REQUIRED, id="bundler-agent-required"),
    ],
)
def test_schema_accepts_documented_values(chart: Any, values: Obj) -> None:
    assert schema_errors(chart, values) is None


def test_rendering_enforces_the_schema() -> None:
    with helm.Chart.load(MANAGER_CHART) as chart, pytest.raises(helm.HelmValuesError) as raised:
        chart.render(values={"logFormat": "xml"}, name="bundler", namespace="bundler-system")
    assert "/logFormat" in str(raised.value)
