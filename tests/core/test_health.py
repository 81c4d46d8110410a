from __future__ import annotations

from typing import Any

import pytest

from bundler.api.health import HealthCheck, HealthState
from bundler.core.health import (
    OBJECT_BYTES_MAX,
    check_health_check,
    evaluate,
    resource_plural,
    with_namespace,
)
from bundler.errors import InvalidInputError

DEPLOYMENT = HealthCheck(kind="Deployment", name="web", namespace="apps")
JOB = HealthCheck(kind="Job", name="migrate", namespace="apps")
READY_EXPR = "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
CERTIFICATE = HealthCheck(
    apiVersion="cert-manager.io/v1",
    kind="Certificate",
    name="tls",
    namespace="apps",
    current=READY_EXPR,
    failed="status.conditions.exists(c, c.type == 'Issuing' && c.reason == 'Failed')",
)


def deployment(generation: int = 2, observed: int = 2, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "generation": generation},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": observed, **status},
    }


def condition(kind: str, status: str = "True", **extra: str) -> dict[str, Any]:
    return {"type": kind, "status": status, **extra}


# (id, check, the object (None: missing), state, a piece of the message)
CASES: list[tuple[str, HealthCheck, dict[str, Any] | None, HealthState, str]] = [
    ("missing", DEPLOYMENT, None, HealthState.IN_PROGRESS, "not found (yet)"),
    ("deployment-available", DEPLOYMENT,
     deployment(replicas=2, updatedReplicas=2, availableReplicas=2), HealthState.HEALTHY,
     "2 of 2 replicas available"),
    ("deployment-rolling", DEPLOYMENT,
     deployment(replicas=3, updatedReplicas=1, availableReplicas=2), HealthState.IN_PROGRESS,
     "2 of 2 replicas available, 1 updated, 3 in all"),
    ("deployment-unobserved", DEPLOYMENT, deployment(observed=1), HealthState.IN_PROGRESS,
     "not observed yet"),
    ("deployment-deadline", DEPLOYMENT,
     deployment(conditions=[condition("Progressing", "False", reason="ProgressDeadlineExceeded",
                                      message='ReplicaSet "web-1" has timed out progressing.')]),
     HealthState.FAILED, "ProgressDeadlineExceeded: ReplicaSet"),
    ("job-complete", JOB, {"status": {"conditions": [condition("Complete")]}},
     HealthState.HEALTHY, "completed"),
    ("job-failed", JOB,
     {"status": {"conditions": [condition("Failed", reason="BackoffLimitExceeded")]}},
     HealthState.FAILED, "BackoffLimitExceeded"),
    ("job-running", JOB, {"status": {"succeeded": 0}}, HealthState.IN_PROGRESS,
     "not complete yet"),
    ("cel-current", CERTIFICATE, {"status": {"conditions": [condition("Ready")]}},
     HealthState.HEALTHY, "true"),
    ("cel-failed-first", CERTIFICATE,
     {"status": {"conditions": [condition("Ready"), condition("Issuing", reason="Failed")]}},
     HealthState.FAILED, "Issuing"),
    ("cel-false", CERTIFICATE, {"status": {"conditions": [condition("Ready", "False")]}},
     HealthState.IN_PROGRESS, ": false"),
    ("cel-missing-field", CERTIFICATE, {"metadata": {"name": "tls"}},
     HealthState.IN_PROGRESS, "undeclared reference to 'status'"),
    ("cel-not-a-bool",
     HealthCheck(apiVersion="v1", kind="ConfigMap", name="c", namespace="a", current="size(data)"),
     {"data": {"a": "b"}}, HealthState.FAILED, "not a bool"),
    ("cel-too-large", CERTIFICATE, {"status": {"blob": "x" * OBJECT_BYTES_MAX}},
     HealthState.FAILED, "more than the"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check", "found", "state", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_evaluate(
    check: HealthCheck, found: dict[str, Any] | None, state: HealthState, message: str
) -> None:
    result = evaluate(check, found)
    assert (result.kind, result.namespace, result.name) == (
        check.kind,
        check.namespace,
        check.name,
    )
    assert result.state is state
    assert message in result.message
    assert "in activation" not in result.message


INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("unknown-kind-without-expression", {"kind": "Certificate", "name": "x", "apiVersion": "a/v1"},
     "f.current: kind 'Certificate' has no built-in check"),
    ("no-api-version", {"kind": "Certificate", "name": "x", "current": "true"},
     "f.apiVersion: is required for kind 'Certificate'"),
    ("failed-without-current", {"kind": "Deployment", "name": "x", "failed": "true"},
     "f.current: is required with inProgress or failed"),
    ("bad-cel", {"kind": "Deployment", "name": "x", "current": "status.("},
     "f.current: 'status.(' is not a CEL expression: syntax error at column 8"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_checks_name_the_field(check: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        check_health_check(HealthCheck.model_validate(check), obj="Bundle ws/app", field="f")
    assert str(raised.value).startswith(f"Bundle ws/app: {message}")


def test_namespace_and_api_version_are_filled_in() -> None:
    filled = with_namespace(HealthCheck(kind="Job", name="m"), "apps")
    assert (filled.namespace, filled.apiVersion) == ("apps", "batch/v1")
    cluster_scoped = with_namespace(
        HealthCheck(apiVersion="v1", kind="Node", name="n", namespace="", current="true"), "apps"
    )
    assert cluster_scoped.namespace == ""


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("Deployment", "deployments"),
        ("Ingress", "ingresses"),
        ("NetworkPolicy", "networkpolicies"),
        ("Gateway", "gateways"),
        ("Mesh", "meshes"),
    ],
)
def test_resource_plural(kind: str, plural: str) -> None:
    assert resource_plural(kind) == plural
