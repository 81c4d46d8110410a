"""Acceptance: a Bundle on `6.*` against a real repository follows newly pushed charts.

The simulated fleet (manager, agents, simulated Flux, in memory, ManualClock) with the manager's
RegistryResolver: 6.0.0 rolls out to every cluster; 6.1.0 is pushed; once pollInterval has passed
the Bundle resolves to 6.1.0, every BundleDeployment gets a new deploymentID, and the rollout
strategy (maxUnavailable 1) lets one cluster at a time take it until all are Ready again. Once
against an OCI registry (docker-registry on 127.0.0.1), once against an index.yaml repository
served on 127.0.0.1, and once end to end over HTTP (test API servers) with a basic-auth registry
whose credentials come from the Bundle's `helm.secretRef`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, HELM_RELEASE, OCI_REPOSITORY, SECRET
from bundler.core.labels import ANNOTATION_DEPLOYMENT_ID
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.resolution.chart_resolver import RegistryResolver, ResolverSettings
from bundler.runtime.clock import ManualClock
from bundler.sim.fleet import Fleet, FleetOptions
from tests.support.agent.http_fleet import AGENT_NAMESPACE, HttpFleet, eventually
from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import run_cli
from tests.support.manager.registry_charts import CHART, dockerconfig_secret, push, unique_path
from tests.support.manager.registry_rollout import Rollout, chart_version, is_unavailable
from tests.support.manager.sim_driver import helm_controller, run_until, running_fleet
from tests.support.manager.world import world
from tests.support.registry_fixtures import LocalRegistry

CLUSTERS = ("a", "b", "c")
ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
ONE_AT_A_TIME = {"maxUnavailable": 1}


def six_star(repo: str, **helm: Any) -> Any:
    spec = {"repo": repo, "chart": CHART, "version": "6.*", "pollInterval": "10m", **helm}
    return bundle(ALL, helm=spec, namespace="apps", rolloutStrategy=ONE_AT_A_TIME)


def bundle_status(fleet: Fleet) -> dict[str, Any]:
    status: dict[str, Any] = fleet.store.get(BUNDLE, "app", WS).get("status") or {}
    return status


def all_ready_on(fleet: Fleet, version: str) -> Callable[[], bool]:
    def check() -> bool:
        status = bundle_status(fleet)
        display = status.get("display") or {}
        bds = fleet.store.list(BUNDLE_DEPLOYMENT).items
        return (
            status.get("resolvedVersion") == version
            and display.get("readyClusters") == f"{len(CLUSTERS)}/{len(CLUSTERS)}"
            and len(bds) == len(CLUSTERS)
            and all(chart_version(bd["spec"]["options"]) == version for bd in bds)
            and not any(is_unavailable(bd) for bd in bds)
        )

    return check


def deployment_ids(fleet: Fleet) -> set[str]:
    return {bd["spec"]["deploymentID"] for bd in fleet.store.list(BUNDLE_DEPLOYMENT).items}


def fleet_options(clock: ManualClock) -> FleetOptions:
    resolver = RegistryResolver(ResolverSettings(), clock)
    return FleetOptions(flux_delay=5.0, workers=2, manager_workers=2, resolver=resolver)


def roll_to_six_one(
    fleet: Fleet, clock: ManualClock, publish_six_one: Callable[[], None]
) -> tuple[set[str], Rollout]:
    """Start on 6.0.0, publish 6.1.0, let pollInterval pass: the old IDs and what was watched."""
    fleet.start()
    run_until(fleet, clock, all_ready_on(fleet, "6.0.0"), "6.0.0 Ready everywhere")
    before = deployment_ids(fleet)
    rollout = Rollout("6.1.0")
    watch = fleet.store.watch(BUNDLE_DEPLOYMENT, rollout.on_event)
    try:
        publish_six_one()
        run_until(fleet, clock, all_ready_on(fleet, "6.1.0"), "6.1.0 Ready everywhere")
    finally:
        watch.stop()
    return before, rollout


def test_a_pushed_chart_rolls_out_from_an_oci_registry(
    oci_registry: LocalRegistry,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    clock: ManualClock,
) -> None:
    path = unique_path(request.node.name)
    push(oci_registry, path, "6.0.0", tmp_path)
    inputs = world(*(cluster(name) for name in CLUSTERS), six_star(oci_registry.oci(path)))
    with running_fleet(inputs, fleet_options(clock), clock) as fleet:
        before, rollout = roll_to_six_one(
            fleet, clock, lambda: push(oci_registry, path, "6.1.0", tmp_path)
        )
        after = deployment_ids(fleet)
        assert after.isdisjoint(before)
        assert rollout.staged and rollout.most_unavailable == 1
        assert rollout.waited_for_release and not rollout.ready_before_released
        for sim in fleet.clusters:
            assert sim.store is not None
            source = sim.store.get(OCI_REPOSITORY, "app", AGENT_NAMESPACE)
            assert source["spec"]["ref"]["tag"] == "6.1.0"
            release = sim.store.get(HELM_RELEASE, "app", AGENT_NAMESPACE)
            assert release["metadata"]["annotations"][ANNOTATION_DEPLOYMENT_ID] in after
            # Only the source changed: Flux upgraded on the new tag, not on a new generation.
            assert release["metadata"]["generation"] == release["status"]["observedGeneration"]
            history = release["status"]["history"]
            assert [h["chartVersion"] for h in history[:2]] == ["6.1.0", "6.0.0"]
            installed = helm_controller(sim).releases()[("apps", "app")]
            assert (installed.chart_version, installed.revision) == ("6.1.0", 2)


class IndexHandler(BaseHTTPRequestHandler):
    """Serves the server's `index` (bytes) at /index.yaml."""

    server: IndexServer

    def do_GET(self) -> None:  # the http.server hook
        if self.path != "/index.yaml":
            self.send_error(404)
            return
        body = self.server.index
        self.send_response(200)
        self.send_header("Content-Type", "application/x-yaml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class IndexServer(ThreadingHTTPServer):
    index = b""

    def publish(self, *versions: str) -> None:
        entries = [{"name": CHART, "version": v, "urls": [f"{CHART}-{v}.tgz"]} for v in versions]
        self.index = yaml.safe_dump({"apiVersion": "v1", "entries": {CHART: entries}}).encode()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


@pytest.fixture
def index_server() -> Iterator[IndexServer]:
    server = IndexServer(("127.0.0.1", 0), IndexHandler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_a_published_chart_rolls_out_from_an_index_yaml_repository(
    index_server: IndexServer, clock: ManualClock
) -> None:
    index_server.publish("5.9.0", "6.0.0", "7.0.0-rc.1")
    inputs = world(*(cluster(name) for name in CLUSTERS), six_star(index_server.url))
    with running_fleet(inputs, fleet_options(clock), clock) as fleet:
        before, rollout = roll_to_six_one(
            fleet, clock, lambda: index_server.publish("5.9.0", "6.0.0", "6.1.0", "7.0.0-rc.1")
        )
        assert deployment_ids(fleet).isdisjoint(before)
        assert rollout.staged and rollout.most_unavailable == 1
        assert rollout.waited_for_release and not rollout.ready_before_released
        for sim in fleet.clusters:
            assert sim.store is not None
            release = sim.store.get(HELM_RELEASE, "app", AGENT_NAMESPACE)
            assert release["spec"]["chart"]["spec"]["version"] == "6.1.0"
            history = release["status"]["history"]
            assert [h["chartVersion"] for h in history[:2]] == ["6.1.0", "6.0.0"]
            installed = helm_controller(sim).releases()[("apps", "app")]
            assert (installed.chart_version, installed.revision) == ("6.1.0", 2)


@pytest.fixture
def http_fleet(tmp_path: Path) -> Iterator[HttpFleet]:
    built = HttpFleet(tmp_path)
    yield built
    built.stop()


def test_over_http_with_the_secret_ref_credentials(
    http_fleet: HttpFleet,
    oci_registry_basic_auth: LocalRegistry,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    registry = oci_registry_basic_auth
    assert registry.username is not None and registry.password is not None
    path = unique_path(request.node.name)
    push(registry, path, "6.0.0", tmp_path)
    resolver = RegistryResolver(ResolverSettings(cache_seconds=0.0))
    options = ManagerOptions(namespaces=(WS,), workers=2, resolver=resolver)
    http_fleet.manager = Manager(http_fleet.mgmt, options)
    for name in ("a", "b"):
        http_fleet.add_cluster(name)
    secret = dockerconfig_secret(
        "registry-creds", registry.host, registry.username, registry.password
    )
    http_fleet.management.store.create(SECRET, secret)
    http_fleet.start()
    app = six_star(registry.oci(path), pollInterval="1s", secretRef={"name": "registry-creds"})
    http_fleet.put(BUNDLE, app.to_wire())

    def everywhere_on(version: str) -> Callable[[], bool]:
        def check() -> bool:
            tags: list[str] = []
            for downstream in http_fleet.clusters.values():
                found = downstream.server.store.list(OCI_REPOSITORY).items
                tags.extend(source["spec"]["ref"]["tag"] for source in found)
            status = http_fleet.bundle_status("app")
            return (
                status.get("resolvedVersion") == version
                and tags == [version, version]
                and http_fleet.ready_clusters("app") == "2/2"
            )

        return check

    eventually(everywhere_on("6.0.0"), "6.0.0 on both clusters")
    for downstream in http_fleet.clusters.values():
        copied = downstream.server.store.get(SECRET, "app-credentials", AGENT_NAMESPACE)
        assert copied["data"] == secret["data"]
        source = downstream.server.store.get(OCI_REPOSITORY, "app", AGENT_NAMESPACE)
        assert source["spec"]["secretRef"] == {"name": "app-credentials"}
    push(registry, path, "6.1.0", tmp_path)
    eventually(everywhere_on("6.1.0"), "6.1.0 on both clusters")


def test_bundler_sim_resolves_ranges_against_the_registry(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    oci_registry: LocalRegistry,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-docker-config"))
    path = unique_path(request.node.name)
    push(oci_registry, path, "6.0.0", tmp_path)
    documents = [cluster("a").to_wire(), six_star(oci_registry.oci(path)).to_wire()]
    inputs = tmp_path / "inputs.yaml"
    inputs.write_text(yaml.safe_dump_all(documents))
    result = run_cli(capsys, "sim", "-f", str(inputs), "--flux-delay", "0", "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    ready = [(b["bundle"], b["ready"], b["desired"], b["state"]) for b in report["bundles"]]
    assert ready == [(f"{WS}/app", 1, 1, "Ready")]
