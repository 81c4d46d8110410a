"""The agent's health checks over in-memory stores with the simulated Flux: evaluated once Flux
reports the release Ready, holding readiness back until healthy, looked at again by themselves,
and bounded."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.agent.expressions import CPU_SECONDS
from bundler.agent.health_checks import RECHECK_PENDING
from bundler.api.resources import ALL_KINDS, CONFIG_MAP, DEPLOYMENT, JOB
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.agent.objects import bd_object
from tests.support.agent.world import AgentWorld, WorldFactory

WEB = {"kind": "Deployment", "name": "web"}
MIGRATE = {"kind": "Job", "name": "migrate", "namespace": "jobs"}


@pytest.fixture
def checked(make_world: WorldFactory) -> AgentWorld:
    """A world whose downstream cluster serves Deployments, Jobs and ConfigMaps too."""
    probe = make_world(flux=False)
    served = [*ALL_KINDS, DEPLOYMENT, JOB, CONFIG_MAP]
    world = make_world(downstream=MemoryStore(clock=probe.clock.now, served=served))
    world.start()
    return world


def deployment(available: int, **status: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "app"},
        "spec": {"replicas": 2},
        "status": {
            "observedGeneration": 1,
            "replicas": 2,
            "updatedReplicas": 2,
            "availableReplicas": available,
            **status,
        },
    }


def results(world: AgentWorld) -> list[tuple[str, str, str]]:
    found = world.bd()["status"].get("healthChecks") or []
    return [(r["kind"], r["name"], r["state"]) for r in found]


def test_a_deployment_check_holds_ready_until_it_is_available(checked: AgentWorld) -> None:
    checked.downstream.create(DEPLOYMENT, deployment(available=0))
    checked.put_bd(bd_object(health_checks=[{**WEB, "namespace": "app"}]))
    status = checked.bd()["status"]
    assert status["ready"] is False
    assert results(checked) == [("Deployment", "web", "InProgress")]
    ready = checked.condition("app", "Ready")
    assert ready["reason"] == "HealthCheckPending"
    assert "Deployment app/web: 0 of 2 replicas available" in ready["message"]
    assert status["nonReadyStatus"] == [
        {
            "kind": "Deployment",
            "namespace": "app",
            "name": "web",
            "status": "InProgress",
            "message": "0 of 2 replicas available, 2 updated, 2 in all",
        }
    ]
    live = checked.downstream.get(DEPLOYMENT, "web", "app")
    live["status"]["availableReplicas"] = 2
    checked.downstream.update_status(DEPLOYMENT, live)
    # Nothing watches the checked objects: the agent looks again by itself.
    checked.advance(RECHECK_PENDING + 1)
    assert checked.bd()["status"]["ready"] is True
    assert results(checked) == [("Deployment", "web", "Healthy")]


def test_a_failed_check_is_reported_with_its_object(checked: AgentWorld) -> None:
    failed = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "jobs"},
        "status": {"conditions": [failed]},
    }
    checked.downstream.create(JOB, job)
    checked.put_bd(bd_object(health_checks=[MIGRATE]))
    ready = checked.condition("app", "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "HealthCheckFailed")
    assert "Job jobs/migrate: BackoffLimitExceeded" in ready["message"]
    assert results(checked) == [("Job", "migrate", "Failed")]


def test_cel_checks_read_the_object_and_a_missing_one_is_pending(checked: AgentWorld) -> None:
    check = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "flags",
        "current": "data.ready == 'true'",
    }
    checked.put_bd(bd_object(health_checks=[check]))
    assert checked.bd()["status"]["healthChecks"][0]["message"] == "not found (yet)"
    flags = {"metadata": {"name": "flags", "namespace": "app"}, "data": {"ready": "true"}}
    checked.downstream.create(CONFIG_MAP, flags)
    checked.advance(RECHECK_PENDING + 1)
    assert results(checked) == [("ConfigMap", "flags", "Healthy")]
    assert checked.bd()["status"]["ready"] is True


def test_a_kind_the_cluster_does_not_serve_fails_saying_so(world: AgentWorld) -> None:
    check = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "name": "tls",
             "current": "true"}  # fmt: skip
    world.put_bd(bd_object(health_checks=[check]))
    (found,) = world.bd()["status"]["healthChecks"]
    assert found["state"] == "Failed"
    assert "does not serve certificates.cert-manager.io/v1" in found["message"]


def test_an_expression_that_runs_too_long_is_stopped(checked: AgentWorld) -> None:
    items = {"metadata": {"name": "big", "namespace": "app"}, "data": {"n": "x"}}
    checked.downstream.create(CONFIG_MAP, items)
    # Quadratic and more in the object: stopped at the bound, never waited out.
    nested = "[1,2,3,4,5,6,7,8,9,10].all(a, " * 7 + "true" + ")" * 7
    check = {"apiVersion": "v1", "kind": "ConfigMap", "name": "big", "current": nested}
    checked.put_bd(bd_object(health_checks=[check]))
    (found,) = checked.bd()["status"]["healthChecks"]
    assert found["state"] == "Failed"
    assert f"took more than {CPU_SECONDS:g}s of CPU time" in found["message"]
