"""Bootstrap: what a new Cluster gets (Flux, then the pull agent) and where it stands.

Pure: data in, data out. `bootstrap_plan` merges the workspace's BootstrapConfig with the Cluster's
`spec.bootstrap`; `bootstrap_objects` builds the Flux objects that install the charts through the
cluster's kubeconfig Secret (remote HelmReleases, `spec.kubeConfig.secretRef`); `decide` says what
to write and which conditions the Cluster shows.

The objects live in the workspace, beside the kubeconfig Secret they use, not in the cluster
namespace: a pull agent may `get` any Secret of its cluster namespace, and the downstream cluster's
admin kubeconfig must never be one of them (the remote agent removes its copy on the handover for
that reason). They stay managed from the management cluster in every mode, so a settings change
upgrades Flux or the agent everywhere.

Once Flux is installed the Cluster is switched to pull mode, and the agent's release written as
soon as the agent's token is (the manager keeps the pull agent's identity, token included, in pull
mode only): the remote agent hands its releases over (suspend, delete, nothing uninstalled) and the
pull agent, once it runs, adopts them. Starting the pull agent before the switch would put two
controllers on one release while the remote agent still writes.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.api.bootstrap import BootstrapChart, BootstrapConfig
from bundler.api.cluster import AgentMode, Cluster
from bundler.api.meta import IntOrPercent
from bundler.core.flux import KUBECONFIG_SECRET_KEY
from bundler.core.flux.release import HELM_RELEASE_API_VERSION
from bundler.core.flux.source import SOURCE_API_VERSION
from bundler.core.labels import LABEL_CLUSTER_NAME, LABEL_MANAGED_BY
from bundler.core.naming import DNS1123_LABEL_MAX, shorten_name
from bundler.core.rollout import DEFAULT_MAX_UNAVAILABLE, resolve_int_or_percent

Obj = dict[str, Any]

MANAGED_BY_BOOTSTRAP = "bundler-bootstrap"
VALUES_KEY = "values.yaml"
FLUX_RELEASE_NAME = "flux"
AGENT_RELEASE_NAME = "bundler-agent"
AGENT_NAMESPACE = "bundler-system"
INTERVAL = "10m"


class Part(StrEnum):
    FLUX = "flux"
    AGENT = "agent"


class BootstrapCondition(StrEnum):
    FLUX_INSTALLED = "FluxInstalled"
    AGENT_CONNECTED = "AgentConnected"
    BOOTSTRAPPED = "Bootstrapped"


BOOTSTRAP_CONDITIONS = frozenset(c.value for c in BootstrapCondition)


class Reason(StrEnum):
    GATED = "ClusterGated"
    KUBECONFIG_MISSING = "KubeconfigMissing"
    INSTALLING = "Installing"
    INSTALLED = "Installed"
    FLUX_PRESENT = "FluxPresent"
    DISABLED = "Disabled"
    WAITING_FOR_FLUX = "WaitingForFlux"
    TOKEN_PENDING = "AgentTokenPending"
    MANAGEMENT_MISSING = "ManagementNotSet"
    AWAITING_CHECK_IN = "AwaitingCheckIn"
    CONNECTED = "Connected"
    REMOTE_MODE = "RemoteMode"
    BOOTSTRAPPED = "Bootstrapped"
    IN_PROGRESS = "InProgress"
    REMOVED = "BootstrapRemoved"


@dataclass(frozen=True)
class BootstrapPlan:
    """What one Cluster gets: the charts (None: not installed) and the mode to end in."""

    flux: BootstrapChart | None
    agent: BootstrapChart | None
    mode: AgentMode


@dataclass(frozen=True)
class ReleaseState:
    """A bootstrap HelmRelease as observed: absent, or its Ready condition."""

    exists: bool = False
    ready: bool = False
    message: str = ""


@dataclass(frozen=True)
class Observed:
    gate: str | None
    kubeconfig_secret: str | None
    flux: ReleaseState
    agent: ReleaseState
    # The Cluster's pull agent checked in and never reported FluxNotInstalled.
    flux_present: bool
    pull_agent_seen: bool
    token_ready: bool
    # The BootstrapConfig says how the agent reaches the management cluster (spec.management).
    management_set: bool = True


@dataclass(frozen=True)
class ConditionSpec:
    type: BootstrapCondition
    status: bool
    reason: Reason
    message: str


@dataclass(frozen=True)
class Decision:
    write: frozenset[Part]
    switch_to_pull: bool
    conditions: tuple[ConditionSpec, ...]


def bootstrap_plan(
    config: BootstrapConfig | None, cluster: Cluster, imported: bool
) -> BootstrapPlan | None:
    """The plan for `cluster`, or None when it is not bootstrapped (no config, not asked for)."""
    if config is None:
        return None
    override = cluster.spec.bootstrap
    asked = override.enabled if override is not None else None
    if asked is False or (asked is None and not (imported and config.spec.importedClusters)):
        return None
    flux, agent = config.spec.flux, config.spec.agent
    mode = config.spec.mode
    if override is not None:
        flux = _pinned(flux, override.fluxVersion)
        agent = _pinned(agent, override.agentVersion)
        mode = override.mode or mode
    return BootstrapPlan(
        flux=flux if flux is not None and flux.enabled else None,
        agent=agent if agent is not None and agent.enabled else None,
        mode=mode,
    )


def _pinned(chart: BootstrapChart | None, version: str | None) -> BootstrapChart | None:
    if chart is None or version is None:
        return chart
    return chart.model_copy(update={"version": version})


def decide(plan: BootstrapPlan, seen: Observed) -> Decision:
    """What to write this pass and the Cluster's bootstrap conditions."""
    if seen.gate is not None:
        waiting = f"the cluster is not ready: {seen.gate}"
        return _all_false(Reason.GATED, waiting)
    if not seen.kubeconfig_secret:
        return _all_false(Reason.KUBECONFIG_MISSING, "the Cluster names no spec.kubeConfigSecret")
    write: set[Part] = set()
    flux = _flux_condition(plan, seen, write)
    agent, switch = _agent_condition(plan, seen, flux.status, write)
    done = flux.status and agent.status
    summary = ConditionSpec(
        BootstrapCondition.BOOTSTRAPPED,
        done,
        Reason.BOOTSTRAPPED if done else Reason.IN_PROGRESS,
        f"running in {plan.mode.value} mode" if done else "waiting for Flux and the agent",
    )
    return Decision(frozenset(write), switch, (flux, agent, summary))


def _flux_condition(plan: BootstrapPlan, seen: Observed, write: set[Part]) -> ConditionSpec:
    kind = BootstrapCondition.FLUX_INSTALLED
    if seen.flux_present and not seen.flux.exists:
        return ConditionSpec(kind, True, Reason.FLUX_PRESENT, "Flux was there already: kept")
    if plan.flux is None:
        return ConditionSpec(kind, True, Reason.DISABLED, "Flux is not installed by bundler")
    write.add(Part.FLUX)
    if seen.flux.ready:
        return ConditionSpec(kind, True, Reason.INSTALLED, f"Flux {_chart(plan.flux)} installed")
    return ConditionSpec(kind, False, Reason.INSTALLING, seen.flux.message or "installing Flux")


def _agent_condition(
    plan: BootstrapPlan, seen: Observed, flux_ready: bool, write: set[Part]
) -> tuple[ConditionSpec, bool]:
    kind = BootstrapCondition.AGENT_CONNECTED
    if seen.pull_agent_seen and not seen.agent.exists:
        return ConditionSpec(kind, True, Reason.CONNECTED, "the pull agent checks in"), False
    if plan.mode is AgentMode.REMOTE or plan.agent is None:
        message = "deploying through the remote agent on the management cluster"
        return ConditionSpec(kind, True, Reason.REMOTE_MODE, message), False
    if not flux_ready:
        return ConditionSpec(kind, False, Reason.WAITING_FOR_FLUX, "installed after Flux"), False
    if not seen.management_set:
        message = "the BootstrapConfig has no spec.management (the server the agent reaches)"
        return ConditionSpec(kind, False, Reason.MANAGEMENT_MISSING, message), False
    if not seen.token_ready:
        # The token exists in pull mode only (bundler.core.handover.pull_identity_step).
        message = "the agent's token Secret is not filled yet"
        return ConditionSpec(kind, False, Reason.TOKEN_PENDING, message), True
    write.add(Part.AGENT)
    if seen.pull_agent_seen:
        return ConditionSpec(kind, True, Reason.CONNECTED, "the pull agent checks in"), True
    message = seen.agent.message or f"installing the agent {_chart(plan.agent)}"
    return ConditionSpec(kind, False, Reason.AWAITING_CHECK_IN, message), True


def _all_false(reason: Reason, message: str) -> Decision:
    conditions = tuple(ConditionSpec(c, False, reason, message) for c in BootstrapCondition)
    return Decision(frozenset(), False, conditions)


def may_change(unavailable: int, total: int, max_unavailable: IntOrPercent | None) -> bool:
    """Whether one more bootstrap release may change (an upgrade: it is not Ready while Flux
    works): only while fewer than `max_unavailable` of the `total` are not Ready."""
    return unavailable < resolve_int_or_percent(max_unavailable, total, DEFAULT_MAX_UNAVAILABLE)


def removed_condition() -> ConditionSpec:
    """Bootstrapped, once the settings are gone: what runs is left running."""
    message = "bootstrap settings removed: Flux and the agent stay installed, no longer upgraded"
    return ConditionSpec(BootstrapCondition.BOOTSTRAPPED, False, Reason.REMOVED, message)


def ready_condition(release: Obj) -> Obj:
    """The Ready condition Flux wrote on a HelmRelease, or {} while there is none."""
    conditions = (release.get("status") or {}).get("conditions") or ()
    return next((c for c in conditions if c.get("type") == "Ready"), {})


def release_state(release: Obj | None) -> ReleaseState:
    if release is None:
        return ReleaseState()
    ready = ready_condition(release)
    return ReleaseState(True, ready.get("status") == "True", str(ready.get("message") or ""))


def _chart(chart: BootstrapChart) -> str:
    return f"{chart.chart} {chart.version or '(latest)'}"


# -- objects ------------------------------------------------------------------------------------


def object_name(cluster: str, part: Part) -> str:
    return shorten_name(f"bootstrap-{cluster}-{part.value}", DNS1123_LABEL_MAX)


def values_secret_name(cluster: str) -> str:
    return shorten_name(f"bootstrap-{cluster}-agent-values", DNS1123_LABEL_MAX)


def bootstrap_labels(cluster: str) -> dict[str, str]:
    return {LABEL_MANAGED_BY: MANAGED_BY_BOOTSTRAP, LABEL_CLUSTER_NAME: cluster}


def bootstrap_objects(
    workspace: str, cluster: str, kubeconfig_secret: str, part: Part, chart: BootstrapChart
) -> list[tuple[str, Obj]]:
    """(kind, object) for one part: its chart source and its remote HelmRelease."""
    name = object_name(cluster, part)
    meta = {"name": name, "namespace": workspace, "labels": bootstrap_labels(cluster)}
    source_spec: Obj = {"url": chart.repo, "interval": INTERVAL}
    if chart.repo.startswith("oci://"):
        source_spec["type"] = "oci"
    source = {
        "apiVersion": SOURCE_API_VERSION,
        "kind": "HelmRepository",
        "metadata": dict(meta),
        "spec": source_spec,
    }
    chart_spec: Obj = {"chart": chart.chart, "sourceRef": {"kind": "HelmRepository", "name": name}}
    if chart.version:
        chart_spec["version"] = chart.version
    release_name = FLUX_RELEASE_NAME if part is Part.FLUX else AGENT_RELEASE_NAME
    spec: Obj = {
        "interval": INTERVAL,
        "chart": {"spec": chart_spec},
        "releaseName": release_name,
        "targetNamespace": chart.namespace,
        "storageNamespace": chart.namespace,
        "install": {"createNamespace": True},
        "kubeConfig": {"secretRef": {"name": kubeconfig_secret, "key": KUBECONFIG_SECRET_KEY}},
    }
    if chart.values:
        spec["values"] = chart.values
    if part is Part.AGENT:
        spec["dependsOn"] = [{"name": object_name(cluster, Part.FLUX)}]
        secret = {"kind": "Secret", "name": values_secret_name(cluster), "valuesKey": VALUES_KEY}
        spec["valuesFrom"] = [secret]
    release = {
        "apiVersion": HELM_RELEASE_API_VERSION,
        "kind": "HelmRelease",
        "metadata": dict(meta),
        "spec": spec,
    }
    return [("HelmRepository", source), ("HelmRelease", release)]


def agent_values_secret(workspace: str, cluster: str, identity_values: Obj) -> Obj:
    """The Secret the agent's HelmRelease takes its identity values from (valuesFrom): the token
    stays out of the HelmRelease, and out of everything the manager logs or reports."""
    text = json.dumps(identity_values, sort_keys=True)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": values_secret_name(cluster),
            "namespace": workspace,
            "labels": bootstrap_labels(cluster),
        },
        "type": "Opaque",
        "data": {VALUES_KEY: base64.b64encode(text.encode()).decode("ascii")},
    }
