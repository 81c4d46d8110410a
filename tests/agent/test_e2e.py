"""Acceptance, end to end over HTTP: manager, agents and simulated Flux against test API servers.

Bundle -> BundleDeployments -> HelmReleases on each simulated cluster -> Ready back on the Bundle;
an injected UpgradeFailed; a values change; deletion; keepResources; dependsOn ordering; Flux not
installed; remote mode.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import (
    BUNDLE,
    BUNDLE_DEPLOYMENT,
    HELM_RELEASE,
    HELM_REPOSITORY,
    OCI_REPOSITORY,
    SECRET,
)
from bundler.core.labels import ANNOTATION_DEPLOYMENT_ID
from bundler.core.naming import cluster_namespace
from bundler.sim.failures import FailurePolicy
from bundler.sim.helm_controller import FluxSettings
from bundler.store.errors import NotFound
from bundler.store.protocol import WatchEvent
from tests.support.agent.http_fleet import AGENT_NAMESPACE, HttpFleet, eventually
from tests.support.builders import WS, bundle
from tests.support.schemas import validate

EVERYWHERE: list[dict[str, Any]] = [{"clusterSelector": {}}]


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[HttpFleet]:
    built = HttpFleet(tmp_path)
    yield built
    built.stop()


def app(version: str = "1.0.0", **helm: Any) -> dict[str, Any]:
    spec = {"version": version, **helm}
    return bundle(EVERYWHERE, name="app", helm=spec, namespace="apps").to_wire()


def test_bundle_rolls_out_changes_fails_and_goes(fleet: HttpFleet) -> None:
    fails_v2 = FluxSettings(failures=FailurePolicy(versions=frozenset({"2.0.0"})))
    fleet.add_cluster("eu-1", {"env": "prod"})
    fleet.add_cluster("us-1", {"env": "prod"})
    fleet.add_cluster("dev-1", {"env": "dev"}, settings=fails_v2)
    fleet.start()

    fleet.put(BUNDLE, app(values={"replicas": 1}))
    eventually(lambda: fleet.ready_clusters("app") == "3/3", "the bundle to read 3/3")
    ids = {bd["spec"]["deploymentID"] for bd in fleet.bundle_deployments()}
    for downstream in fleet.clusters.values():
        release = downstream.release("app")
        assert release is not None and release["spec"]["values"] == {"replicas": 1}
        assert len(downstream.flux_objects()) == 2

    # A values change: new deploymentIDs, every HelmRelease updated.
    fleet.put(BUNDLE, app(values={"replicas": 2}))

    def updated() -> bool:
        releases = [d.release("app") for d in fleet.clusters.values()]
        return all(r is not None and r["spec"]["values"] == {"replicas": 2} for r in releases)

    eventually(updated, "every HelmRelease to carry the new values")
    new_ids = {bd["spec"]["deploymentID"] for bd in fleet.bundle_deployments()}
    assert new_ids.isdisjoint(ids)
    for downstream in fleet.clusters.values():
        release = downstream.release("app")
        assert release is not None
        assert release["metadata"]["annotations"][ANNOTATION_DEPLOYMENT_ID] in new_ids
    eventually(lambda: fleet.ready_clusters("app") == "3/3", "3/3 after the values change")

    # An upgrade Flux fails on one cluster shows on the Bundle with Flux's message.
    fleet.put(BUNDLE, app(version="2.0.0", values={"replicas": 2}))

    def upgrade_failed() -> bool:
        entries = fleet.bundle_status("app").get("nonReady") or []
        return any("UpgradeFailed" in entry.get("message", "") for entry in entries)

    eventually(upgrade_failed, "the failed upgrade on the bundle")
    eventually(lambda: fleet.ready_clusters("app") == "2/3", "2/3 with the failed upgrade")
    non_ready = fleet.bundle_status("app")["nonReady"]
    assert [entry["cluster"] for entry in non_ready] == [f"{WS}/dev-1"]
    message = non_ready[0]["message"]
    assert message.startswith("UpgradeFailed: Helm upgrade failed for release apps/app")
    assert "chart app@2.0.0" in message

    # Deleting the bundle removes every HelmRelease; Flux uninstalls.
    fleet.management.store.delete(BUNDLE, "app", WS)

    def gone() -> bool:
        return all(
            d.release("app") is None and not d.flux.releases() for d in fleet.clusters.values()
        )

    eventually(gone, "every HelmRelease to be deleted and uninstalled")


def test_keep_resources_suspends_and_leaves_the_release(fleet: HttpFleet) -> None:
    downstream = fleet.add_cluster("eu-1")
    fleet.start()
    fleet.put(BUNDLE, bundle(EVERYWHERE, name="app", keepResources=True).to_wire())
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "the bundle to read 1/1")
    seen: list[WatchEvent] = []
    watch = downstream.server.store.watch(HELM_RELEASE, seen.append, namespace=AGENT_NAMESPACE)
    fleet.management.store.delete(BUNDLE, "app", WS)
    eventually(lambda: downstream.release("app") is None, "the HelmRelease to be deleted")
    watch.stop()
    assert ("default", "app") in downstream.flux.releases()
    first_change = seen[0].object
    assert first_change["spec"]["suspend"] is True
    assert not first_change["metadata"].get("deletionTimestamp")


def test_dependencies_deploy_in_order(fleet: HttpFleet) -> None:
    downstream = fleet.add_cluster("eu-1", settings=FluxSettings(delay=0.2))
    order: list[tuple[str, str, bool]] = []

    def record(event: WatchEvent) -> None:
        conditions = (event.object.get("status") or {}).get("conditions") or []
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        order.append((event.type.value, event.object["metadata"]["name"], ready))

    watch = downstream.server.store.watch(HELM_RELEASE, record, namespace=AGENT_NAMESPACE)
    fleet.start()
    fleet.put(BUNDLE, bundle(EVERYWHERE, name="web", dependsOn=[{"name": "db"}]).to_wire())

    def waiting() -> bool:
        conditions = (_bd_status(fleet, "eu-1", "web").get("conditions")) or []
        return any(c["type"] == "Ready" and c["reason"] == "DependencyNotReady" for c in conditions)

    eventually(waiting, "web to wait for db")
    assert "db" in _condition(fleet, "eu-1", "web", "Ready")["message"]
    assert downstream.release("web") is None
    fleet.put(BUNDLE, bundle(EVERYWHERE, name="db").to_wire())
    eventually(lambda: fleet.ready_clusters("web") == "1/1", "web to become Ready")
    watch.stop()
    web_created = order.index(("ADDED", "web", False))
    assert any(name == "db" and ready for _, name, ready in order[:web_created])
    web = downstream.release("web")
    assert web is not None
    assert web["spec"]["dependsOn"] == [{"name": "db", "namespace": AGENT_NAMESPACE}]


def test_flux_not_installed_is_reported_until_it_is(fleet: HttpFleet) -> None:
    downstream = fleet.add_cluster("bare", flux_installed=False)
    fleet.start()
    fleet.put(BUNDLE, bundle(EVERYWHERE, name="app").to_wire())

    def reported() -> bool:
        entries = fleet.bundle_status("app").get("nonReady") or []
        return any("FluxNotInstalled" in entry.get("message", "") for entry in entries)

    eventually(reported, "FluxNotInstalled on the bundle")
    ready = _condition(fleet, "bare", "app", "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "FluxNotInstalled")
    assert "helm-controller" in ready["message"] and "source-controller" in ready["message"]

    for res in (HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY):
        downstream.server.add_resource(res)
    downstream.flux.start()
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "Ready once Flux is installed")


def test_remote_mode_writes_releases_with_the_kubeconfig(fleet: HttpFleet) -> None:
    flux = fleet.serve_remote()
    kubeconfig = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()
    store = fleet.management.store
    fleet.add_remote_cluster("edge-1")
    fleet.start(flux)
    fleet.put(BUNDLE, bundle(EVERYWHERE, name="app", namespace="apps").to_wire())
    eventually(lambda: fleet.ready_clusters("app") == "1/1", "the remote cluster to be Ready")
    namespace = cluster_namespace(WS, "edge-1")
    release = store.get(HELM_RELEASE, "app", namespace)
    validate(release)
    assert release["spec"]["kubeConfig"] == {
        "secretRef": {"name": "edge-1-kubeconfig", "key": "value"}
    }
    assert (release["spec"]["targetNamespace"], release["spec"]["storageNamespace"]) == (
        "apps",
        "apps",
    )
    source = store.get(HELM_REPOSITORY, "app", namespace)
    validate(source)
    assert store.get(SECRET, "edge-1-kubeconfig", namespace)["data"] == {"value": kubeconfig}


def _bd_status(fleet: HttpFleet, cluster_name: str, bundle_name: str) -> dict[str, Any]:
    try:
        bd = fleet.management.store.get(
            BUNDLE_DEPLOYMENT, bundle_name, cluster_namespace(WS, cluster_name)
        )
    except NotFound:
        return {}
    status: dict[str, Any] = bd.get("status") or {}
    return status


def _condition(fleet: HttpFleet, cluster_name: str, bundle_name: str, type: str) -> dict[str, Any]:
    conditions = _bd_status(fleet, cluster_name, bundle_name).get("conditions") or []
    found: dict[str, Any] = next(c for c in conditions if c["type"] == type)
    return found
