"""The bootstrap rules (bundler.core.bootstrap): who is bootstrapped with what, what is written in
each phase, the conditions, and Flux objects that Flux's schemas accept."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from bundler.api.bootstrap import BootstrapConfig
from bundler.api.cluster import AgentMode, Cluster
from bundler.core.bootstrap import (
    BootstrapPlan,
    Decision,
    Observed,
    Part,
    Reason,
    ReleaseState,
    agent_values_secret,
    bootstrap_objects,
    bootstrap_plan,
    decide,
    may_change,
)
from tests.support.schemas import validate

FLUX = {
    "repo": "https://fluxcd-community.github.io/helm-charts",
    "chart": "flux2",
    "version": "2.x",
}
AGENT = {"repo": "oci://registry.example/charts", "chart": "bundler-agent", "version": "0.1.0"}


def config(**spec: Any) -> BootstrapConfig:
    body = {"flux": FLUX, "agent": AGENT, **spec}
    return BootstrapConfig.model_validate(
        {"metadata": {"name": "default", "namespace": "ws"}, "spec": body}
    )


def cluster(bootstrap: dict[str, Any] | None = None) -> Cluster:
    spec: dict[str, Any] = {"kubeConfigSecret": "c1-kubeconfig", "agentMode": "remote"}
    if bootstrap is not None:
        spec["bootstrap"] = bootstrap
    return Cluster.model_validate({"metadata": {"name": "c1", "namespace": "ws"}, "spec": spec})


@pytest.mark.parametrize(
    ("cfg", "bootstrap", "imported", "wanted"),
    [
        (None, None, True, None),
        (config(), None, True, ("2.x", "0.1.0", AgentMode.PULL)),
        (config(), None, False, None),
        (config(), {"enabled": True}, False, ("2.x", "0.1.0", AgentMode.PULL)),
        (config(), {"enabled": False}, True, None),
        (config(importedClusters=False), None, True, None),
        (config(), {"agentVersion": "0.2.0", "mode": "remote"}, True, ("2.x", "0.2.0", "remote")),
        (
            config(flux={**FLUX, "enabled": False}),
            {"fluxVersion": "2.1.0"},
            True,
            (None, "0.1.0", AgentMode.PULL),
        ),
    ],
    ids=[
        "no-config-nothing",
        "imported-cluster-by-default",
        "other-cluster-not-by-default",
        "other-cluster-asks",
        "imported-cluster-opts-out",
        "workspace-leaves-imports-alone",
        "cluster-overrides-version-and-mode",
        "flux-disabled-stays-disabled",
    ],
)
def test_the_plan_merges_workspace_settings_with_the_cluster_overrides(
    cfg: BootstrapConfig | None,
    bootstrap: dict[str, Any] | None,
    imported: bool,
    wanted: tuple[str | None, str, str] | None,
) -> None:
    plan = bootstrap_plan(cfg, cluster(bootstrap), imported)
    if wanted is None:
        assert plan is None
        return
    assert plan is not None
    assert (plan.flux.version if plan.flux else None, plan.agent and plan.agent.version) == (
        wanted[0],
        wanted[1],
    )
    assert plan.mode == AgentMode(wanted[2])


PLAN = bootstrap_plan(config(), cluster(), True)
REMOTE_PLAN = bootstrap_plan(config(mode="remote"), cluster(), True)
READY = ReleaseState(exists=True, ready=True)
INSTALLING = ReleaseState(exists=True, ready=False, message="install in progress")


def seen(**changes: Any) -> Observed:
    base: dict[str, Any] = {
        "gate": None,
        "kubeconfig_secret": "c1-kubeconfig",
        "flux": ReleaseState(),
        "agent": ReleaseState(),
        "flux_present": False,
        "pull_agent_seen": False,
        "token_ready": True,
    }
    return Observed(**{**base, **changes})


def summary(decision: Decision) -> tuple[set[str], bool, list[tuple[str, bool, str]]]:
    conditions = [(c.type.value, c.status, c.reason.value) for c in decision.conditions]
    return {p.value for p in decision.write}, decision.switch_to_pull, conditions


def conditions(flux: tuple[bool, Reason], agent: tuple[bool, Reason], done: bool) -> list[Any]:
    last = Reason.BOOTSTRAPPED if done else Reason.IN_PROGRESS
    return [
        ("FluxInstalled", flux[0], flux[1].value),
        ("AgentConnected", agent[0], agent[1].value),
        ("Bootstrapped", done, last.value),
    ]


@pytest.mark.parametrize(
    ("plan", "observed", "writes", "switch", "wanted"),
    [
        (PLAN, seen(gate="control plane not up"), set(), False, None),
        (PLAN, seen(kubeconfig_secret=None), set(), False, None),
        (
            PLAN,
            seen(),
            {"flux"},
            False,
            conditions((False, Reason.INSTALLING), (False, Reason.WAITING_FOR_FLUX), False),
        ),
        (
            PLAN,
            seen(flux=INSTALLING),
            {"flux"},
            False,
            conditions((False, Reason.INSTALLING), (False, Reason.WAITING_FOR_FLUX), False),
        ),
        (
            PLAN,
            seen(flux=READY, token_ready=False),
            {"flux"},
            True,
            conditions((True, Reason.INSTALLED), (False, Reason.TOKEN_PENDING), False),
        ),
        (
            PLAN,
            seen(flux=READY),
            {"flux", "agent"},
            True,
            conditions((True, Reason.INSTALLED), (False, Reason.AWAITING_CHECK_IN), False),
        ),
        (
            PLAN,
            seen(flux=READY, agent=READY, pull_agent_seen=True, flux_present=True),
            {"flux", "agent"},
            True,
            conditions((True, Reason.INSTALLED), (True, Reason.CONNECTED), True),
        ),
        (
            PLAN,
            seen(pull_agent_seen=True, flux_present=True),
            set(),
            False,
            conditions((True, Reason.FLUX_PRESENT), (True, Reason.CONNECTED), True),
        ),
        (
            PLAN,
            seen(flux=READY, management_set=False),
            {"flux"},
            False,
            conditions((True, Reason.INSTALLED), (False, Reason.MANAGEMENT_MISSING), False),
        ),
        (
            REMOTE_PLAN,
            seen(flux=READY),
            {"flux"},
            False,
            conditions((True, Reason.INSTALLED), (True, Reason.REMOTE_MODE), True),
        ),
    ],
    ids=[
        "gated-waits",
        "no-kubeconfig-waits",
        "flux-first",
        "flux-installing-says-flux-message",
        "switched-to-pull-then-waits-for-the-token",
        "flux-ready-agent-written-and-switch-to-pull",
        "pull-agent-checked-in-bootstrapped",
        "cluster-with-flux-and-agent-gets-no-second-one",
        "agent-waits-for-the-management-server",
        "remote-mode-ends-with-flux",
    ],
)
def test_decide_writes_flux_first_then_the_agent_and_switches_to_pull(
    plan: BootstrapPlan | None,
    observed: Observed,
    writes: set[str],
    switch: bool,
    wanted: list[Any] | None,
) -> None:
    assert plan is not None
    got_writes, got_switch, got = summary(decide(plan, observed))
    assert (got_writes, got_switch) == (writes, switch)
    if wanted is None:
        assert all(not status for _, status, _ in got)
    else:
        assert got == wanted


def test_waiting_conditions_say_why() -> None:
    decision = decide(PLAN or pytest.fail("no plan"), seen(flux=INSTALLING))
    messages = {c.type.value: c.message for c in decision.conditions}
    assert messages["FluxInstalled"] == "install in progress"
    assert messages["AgentConnected"] == "installed after Flux"


@pytest.mark.parametrize("part", list(Part), ids=[p.value for p in Part])
def test_bootstrap_objects_are_remote_flux_objects_flux_accepts(part: Part) -> None:
    assert PLAN is not None
    chart = PLAN.flux if part is Part.FLUX else PLAN.agent
    assert chart is not None
    objects = bootstrap_objects("ws", "c1", "c1-kubeconfig", part, chart)
    for _, obj in objects:
        validate(obj)
        assert obj["metadata"]["namespace"] == "ws"
    release = objects[-1][1]["spec"]
    assert release["kubeConfig"] == {"secretRef": {"name": "c1-kubeconfig", "key": "value"}}
    if part is Part.AGENT:
        assert release["dependsOn"] == [{"name": "bootstrap-c1-flux"}]
        assert release["valuesFrom"][0]["kind"] == "Secret"
        assert objects[0][1]["spec"]["type"] == "oci"


def test_the_agent_token_goes_into_the_values_secret_only() -> None:
    values = {"cluster": "ws/c1", "management": {"token": "s3cret", "server": "https://m"}}
    secret = agent_values_secret("ws", "c1", values)
    assert json.loads(base64.b64decode(secret["data"]["values.yaml"])) == values
    assert PLAN is not None and PLAN.agent is not None
    objects = bootstrap_objects("ws", "c1", "c1-kubeconfig", Part.AGENT, PLAN.agent)
    assert "s3cret" not in json.dumps([o for _, o in objects])


@pytest.mark.parametrize(
    ("unavailable", "total", "max_unavailable", "allowed"),
    [
        (0, 3, None, True),
        (2, 3, None, True),
        (0, 3, 1, True),
        (1, 3, 1, False),
        (1, 10, "20%", True),
        (2, 10, "20%", False),
        (0, 3, "10%", True),
    ],
    ids=[
        "default-all-at-once",
        "default-still-room",
        "one-at-a-time-free",
        "one-at-a-time-busy",
        "percentage-room",
        "percentage-full",
        "percentage-at-least-one",
    ],
)
def test_an_upgrade_may_change_a_release_while_under_max_unavailable(
    unavailable: int, total: int, max_unavailable: int | str | None, allowed: bool
) -> None:
    assert may_change(unavailable, total, max_unavailable) is allowed
