"""The expression child: answers, the bounds the kernel enforces, and a fresh child after one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bundler.agent.expressions import ExpressionEvaluator
from bundler.api.health import HealthCheck, HealthState
from bundler.core.health import OBJECT_BYTES_MAX

CERTIFICATE = {
    "apiVersion": "cert-manager.io/v1",
    "kind": "Certificate",
    "metadata": {"name": "web", "namespace": "app"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}
READY = "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
# 10^8 steps: far past any bound, and never finished by waiting.
ENDLESS = "[1,2,3,4,5,6,7,8,9,10].all(a, " * 8 + "true" + ")" * 8


@pytest.fixture(scope="module")
def evaluator() -> Iterator[ExpressionEvaluator]:
    evaluator = ExpressionEvaluator()
    yield evaluator
    evaluator.stop()


def _check(**expressions: str) -> HealthCheck:
    return HealthCheck(
        apiVersion="cert-manager.io/v1", kind="Certificate", name="web", **expressions
    )


@pytest.mark.parametrize(
    ("expressions", "found", "state", "message"),
    [
        ({"current": READY}, CERTIFICATE, HealthState.HEALTHY, f"{READY}: true"),
        ({"current": "status.phase == 'Done'"}, CERTIFICATE, HealthState.IN_PROGRESS, "no such"),
        ({"failed": "true", "current": "true"}, CERTIFICATE, HealthState.FAILED, "true: true"),
        ({"current": "1 + 1"}, CERTIFICATE, HealthState.FAILED, "not a bool"),
        ({"current": "status.("}, CERTIFICATE, HealthState.FAILED, "cannot be compiled"),
        (
            {"current": "true"},
            {**CERTIFICATE, "data": {"x": "y" * OBJECT_BYTES_MAX}},
            HealthState.FAILED,
            f"more than the {OBJECT_BYTES_MAX} an expression reads",
        ),
    ],
    ids=["healthy", "missing-field", "failed-first", "not-bool", "syntax", "object-too-large"],
)
def test_an_expression_is_judged_in_the_child(
    evaluator: ExpressionEvaluator,
    expressions: dict[str, str],
    found: dict[str, Any],
    state: HealthState,
    message: str,
) -> None:
    judged = evaluator.evaluate(_check(**expressions), found)
    assert (judged.kind, judged.namespace, judged.name) == ("Certificate", "", "web")
    assert judged.state is state
    assert message in judged.message


def test_the_kernel_stops_an_expression_past_its_cpu_time() -> None:
    evaluator = ExpressionEvaluator(cpu_seconds=0.5)
    try:
        judged = evaluator.evaluate(_check(current=ENDLESS), CERTIFICATE)
        assert judged.state is HealthState.FAILED
        assert "took more than 0.5s of CPU time: simplify them" in judged.message
        # the next evaluation gets a new child, and the bound starts again from there
        assert evaluator.evaluate(_check(current=READY), CERTIFICATE).state is HealthState.HEALTHY
        assert evaluator.started == 2
    finally:
        evaluator.stop()


def test_a_child_that_stops_answering_is_replaced_at_the_wall_deadline() -> None:
    # a CPU limit it never reaches within the deadline: the wall deadline stops it
    evaluator = ExpressionEvaluator(cpu_seconds=60, wall_seconds=0.5)
    try:
        judged = evaluator.evaluate(_check(current=ENDLESS), CERTIFICATE)
        assert judged.state is HealthState.FAILED
        assert "took more than 0.5s: simplify them" in judged.message
        assert evaluator.evaluate(_check(current=READY), CERTIFICATE).state is HealthState.HEALTHY
    finally:
        evaluator.stop()


def test_a_child_killed_from_outside_is_replaced(evaluator: ExpressionEvaluator) -> None:
    assert evaluator.evaluate(_check(current=READY), CERTIFICATE).state is HealthState.HEALTHY
    evaluator.stop()
    assert evaluator.evaluate(_check(current=READY), CERTIFICATE).state is HealthState.HEALTHY
