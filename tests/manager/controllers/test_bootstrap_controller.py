"""Zero-touch onboarding end to end over HTTP (bundler.manager.controllers.bootstrap_controller): a
Cluster API cluster appears, becomes ready, gets Flux then the agent through remote HelmReleases,
hands over to pull mode and runs its bundles; an agent version change rolls out; removing the
settings leaves it running. The manager, the importer and the remote agents run under their real
RBAC identities (tests.capi.test_e2e.CapiFleet); the downstream cluster is a second test API server
with its own simulated Flux, and its pull agent is started, as the chart would, from the values the
manager wrote for it. Every Flux object written is validated; no token or kubeconfig reaches a
status, an event or a log line.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.agent.agent import Agent
from bundler.agent.config import AgentConfig
from bundler.api.resources import (
    BOOTSTRAP_CONFIG,
    BUNDLE,
    CAPI_CLUSTER,
    CLUSTER,
    FLUX_KINDS,
    HELM_RELEASE,
    HELM_REPOSITORY,
    NAMESPACE,
    SECRET,
)
from bundler.apiserver import ApiServer
from bundler.core.agent.kubeconfig import ApiEndpoint, agent_kubeconfig
from bundler.core.bootstrap import Part, object_name, values_secret_name
from bundler.core.rbac import BOOTSTRAP_RULES, PolicyRule
from bundler.kube.store import KubeStore
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.runtime.host import Host
from bundler.sim.helm_controller import SimulatedHelmController
from bundler.store.errors import Forbidden, NotFound
from bundler.store.protocol import Obj
from tests.support.builders import bundle
from tests.support.capi.capi_fleet import FAST, WS, CapiFleet, eventually
from tests.support.capi.capi_objects import (
    FAKE_KUBECONFIG,
    Version,
    capi_cluster,
    control_plane_status,
    kubeconfig_secret,
)
from tests.support.identities import MANAGER_USER, manager_kubeconfig
from tests.support.manager.bootstrap_rollout import CLUSTERS
from tests.support.manager.bootstrap_rollout import World as InMemory
from tests.support.manager.bootstrap_rollout import config as rollout_config
from tests.support.manager.rbac_rules import rule_id, without
from tests.support.schemas import validate

NAME = "eu-1"
FLUX = {"repo": "https://fluxcd-community.github.io/helm-charts", "chart": "flux2"}
AGENT = {"repo": "https://charts.bundler.example", "chart": "bundler-agent"}


def bootstrap_config(server: ApiServer, agent_version: str) -> Obj:
    return {
        "apiVersion": BOOTSTRAP_CONFIG.api_version,
        "kind": BOOTSTRAP_CONFIG.kind,
        "metadata": {"name": "default", "namespace": WS},
        "spec": {
            "flux": {**FLUX, "version": "2.14.0"},
            "agent": {**AGENT, "version": agent_version, "namespace": "bundler-system"},
            "management": {"server": server.url, "insecureSkipTLSVerify": True},
        },
    }


class Workload:
    """The downstream cluster: an API server, its simulated Flux, and the pull agent once the
    bootstrap's agent release is installed (what the agent chart would start)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.server = ApiServer().start()
        self.admin = KubeStore.from_kubeconfig(self.server.kubeconfig(tmp_path / "w.kubeconfig"))
        self.host = Host(self.admin, workers=2, backoff_cap=0.5, name="workload")
        self.flux = SimulatedHelmController(
            self.host, self.server.store, lambda _: (f"{WS}/{NAME}", {}), name="flux:workload"
        )
        self.agent: Agent | None = None
        self.management: KubeStore | None = None
        self.flux.start()
        self.host.start()

    def start_agent(self, values: dict[str, Any]) -> None:
        management = values["management"]
        endpoint = ApiEndpoint(server=management["server"], insecure=True)
        config = agent_kubeconfig(
            endpoint, management["token"], management["namespace"], values["cluster"]
        )
        path = self.tmp_path / "pull-agent.kubeconfig"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        self.management = KubeStore.from_kubeconfig(path, None, FAST)
        workspace, cluster = values["cluster"].split("/")
        self.agent = Agent(
            self.host,
            self.management,
            self.admin,
            AgentConfig(workspace=workspace, cluster=cluster),
        )
        self.agent.start()

    def stop(self) -> None:
        self.host.stop()
        if self.agent is not None:
            self.agent.caches.stop()
        self.flux.informer.stop()
        for store in (self.admin, self.management):
            if store is not None:
                store.close()
        self.server.stop()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[CapiFleet]:
    built = CapiFleet(tmp_path, bootstrap=True)
    built.start()
    yield built
    built.stop()


@pytest.fixture
def workload(tmp_path: Path) -> Iterator[Workload]:
    built = Workload(tmp_path)
    yield built
    built.stop()


def conditions(fleet: CapiFleet) -> dict[str, tuple[str, str]]:
    found = fleet.find(CLUSTER, NAME, WS) or {}
    listed = (found.get("status") or {}).get("conditions") or []
    return {c["type"]: (c["status"], c["reason"]) for c in listed}


def release(fleet: CapiFleet, part: Part) -> Obj | None:
    found = fleet.find(HELM_RELEASE, object_name(NAME, part), WS)
    if found is not None:
        validate(found)
    return found


def _app_release(workload: Workload) -> Obj | None:
    """The app's HelmRelease on the workload cluster, None until the agent has written it."""
    try:
        return workload.server.store.get(HELM_RELEASE, "app", "bundler-system")
    except NotFound:
        return None


def is_ready(obj: Obj | None) -> bool:
    listed = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in listed)


def agent_values(fleet: CapiFleet) -> dict[str, Any]:
    secret = fleet.find(SECRET, values_secret_name(NAME), WS)
    assert secret is not None
    values: dict[str, Any] = json.loads(base64.b64decode(secret["data"]["values.yaml"]))
    return values


def test_a_capi_cluster_is_bootstrapped_hands_over_to_pull_mode_and_runs_its_bundles(
    fleet: CapiFleet, workload: Workload, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fleet.store.create(BOOTSTRAP_CONFIG, bootstrap_config(fleet.server, "0.1.0"))
    app = bundle([{"clusterSelector": {}}], name="app").to_wire()
    app["metadata"]["namespace"] = WS
    fleet.store.create(BUNDLE, app)
    capi = capi_cluster(NAME, namespace=WS, initialized=False)
    fleet.store.create(CAPI_CLUSTER, capi)
    fleet.store.patch_status(CAPI_CLUSTER, NAME, {"status": capi["status"]}, WS)

    eventually(
        lambda: conditions(fleet).get("Bootstrapped", ("", ""))[1] == "ClusterGated", "gated"
    )
    assert release(fleet, Part.FLUX) is None

    # The control plane comes up and Cluster API writes the kubeconfig Secret.
    status = {"status": control_plane_status(Version.V1BETA2, True)}
    fleet.store.patch_status(CAPI_CLUSTER, NAME, status, WS)
    fleet.store.create(SECRET, kubeconfig_secret(NAME, WS))
    eventually(lambda: is_ready(release(fleet, Part.FLUX)), "Flux installed")
    eventually(lambda: is_ready(release(fleet, Part.AGENT)), "the agent installed")
    agent_release = release(fleet, Part.AGENT)
    assert agent_release is not None
    assert agent_release["spec"]["dependsOn"] == [{"name": object_name(NAME, Part.FLUX)}]
    cluster = fleet.find(CLUSTER, NAME, WS)
    assert cluster is not None and cluster["spec"]["agentMode"] == "pull"
    eventually(
        lambda: conditions(fleet).get("AgentConnected") == ("False", "AwaitingCheckIn"),
        "the Cluster waiting for its pull agent",
    )

    workload.start_agent(agent_values(fleet))
    eventually(lambda: conditions(fleet).get("Bootstrapped") == ("True", "Bootstrapped"), "done")
    assert conditions(fleet)["FluxInstalled"] == ("True", "Installed")
    assert conditions(fleet)["AgentConnected"] == ("True", "Connected")
    eventually(lambda: is_ready(_app_release(workload)), "app")
    eventually(lambda: ready_clusters(fleet) == "1/1", "the bundle Ready in pull mode")
    for res in FLUX_KINDS:
        for obj in workload.server.store.list(res).items + fleet.store.list(res).items:
            validate(obj)

    # Upgrading the agent fleet-wide is a settings change.
    config = fleet.store.get(BOOTSTRAP_CONFIG, "default", WS)
    config["spec"]["agent"]["version"] = "0.2.0"
    fleet.store.update(BOOTSTRAP_CONFIG, config)
    eventually(lambda: chart_version(release(fleet, Part.AGENT)) == "0.2.0", "the agent upgrade")
    eventually(lambda: is_ready(release(fleet, Part.AGENT)), "the upgraded agent Ready")

    # Removing the settings leaves the cluster as it runs, and says so.
    fleet.store.delete(BOOTSTRAP_CONFIG, "default", WS)
    eventually(
        lambda: conditions(fleet).get("Bootstrapped") == ("False", "BootstrapRemoved"), "removed"
    )
    for part in Part:
        kept = release(fleet, part)
        assert kept is not None and not kept["spec"].get("suspend")
        assert not kept["metadata"].get("deletionTimestamp")
    assert (fleet.find(CLUSTER, NAME, WS) or {})["spec"]["agentMode"] == "pull"

    token = agent_values(fleet)["management"]["token"]
    statuses = json.dumps([c.get("status") for c in fleet.store.list(CLUSTER).items])
    assert fleet.server.denials() == []
    # bundler writes no Events: statuses and logs are where a secret could leak.
    for secret_text in (token, FAKE_KUBECONFIG):
        assert secret_text not in statuses
        assert secret_text not in caplog.text


def ready_clusters(fleet: CapiFleet) -> str | None:
    display = (fleet.store.get(BUNDLE, "app", WS).get("status") or {}).get("display") or {}
    found: str | None = display.get("readyClusters")
    return found


def chart_version(obj: Obj | None) -> str | None:
    found: str | None = (
        ((obj or {}).get("spec") or {}).get("chart", {}).get("spec", {}).get("version")
    )
    return found


@pytest.mark.parametrize("rule", BOOTSTRAP_RULES, ids=[rule_id(r) for r in BOOTSTRAP_RULES])
def test_without_any_one_bootstrap_rule_the_manager_is_refused(
    tmp_path: Path, rule: PolicyRule
) -> None:
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        server.store.create(BOOTSTRAP_CONFIG, bootstrap_config(server, "0.1.0"))
        kubeconfig = manager_kubeconfig(server, tmp_path, without(rule))
        with KubeStore.from_kubeconfig(kubeconfig, None, FAST) as store:
            manager = Manager(store, ManagerOptions(namespaces=(WS,), bootstrap=True))
            try:
                with contextlib.suppress(Forbidden):  # refused while filling its caches
                    manager.start()
                eventually(lambda: bool(server.denials(MANAGER_USER)), "a refused request")
            finally:
                manager.stop()


def test_an_object_the_bootstrap_did_not_write_is_left_alone() -> None:
    world = InMemory()
    world.store.create(BOOTSTRAP_CONFIG, rollout_config("2.0.0"))
    for name in CLUSTERS:
        world.store.create(SECRET, kubeconfig_secret(name, "ws"))
        spec = {"kubeConfigSecret": f"{name}-kubeconfig", "bootstrap": {"enabled": True}}
        world.store.create(CLUSTER, {"metadata": {"name": name, "namespace": "ws"}, "spec": spec})
    foreign = {
        "metadata": {"name": object_name("a", Part.FLUX), "namespace": "ws"},
        "spec": {"url": "https://someone-else.example", "interval": "1h"},
    }
    world.store.create(HELM_REPOSITORY, foreign)
    world.start()
    try:
        world.advance(11.0)
        kept = world.store.get(HELM_REPOSITORY, object_name("a", Part.FLUX), "ws")
        assert kept["spec"]["url"] == "https://someone-else.example"
        assert world.store.get(HELM_REPOSITORY, object_name("b", Part.FLUX), "ws")
    finally:
        world.stop()
