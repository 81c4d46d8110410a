"""The simulated Flux helm-controller: what it does to HelmReleases, on a ManualClock."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY, SECRET
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.sim.failures import FailurePolicy
from bundler.sim.helm_controller import (
    FluxSettings,
    InstalledRelease,
    SimulatedHelmController,
)
from bundler.sim.sourced_controller import FLUX_FINALIZER
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.schemas import validate

NS = "bundler-system"
WAIT = 15.0
DELAY = 10.0


class FluxWorld:
    def __init__(self, settings: FluxSettings) -> None:
        self.clock = ManualClock()
        self.store = MemoryStore(clock=self.clock.now)
        self.host = Host(self.store, clock=self.clock, workers=2)
        self.flux = SimulatedHelmController(
            self.host, self.store, lambda _: ("ws/c1", {"env": "prod"}), settings
        )

    def settle(self) -> None:
        assert self.host.wait_idle(WAIT)

    def advance(self, seconds: float) -> None:
        self.settle()
        self.clock.advance(seconds)
        self.settle()

    def put(self, name: str = "app", version: str = "1.0.0", **spec: Any) -> None:
        """A HelmRepository and a HelmRelease, as the agent writes them (update if present)."""
        source = {
            "metadata": {"name": name, "namespace": NS},
            "spec": {"url": "https://charts.example.com", "interval": "10m"},
        }
        body = {
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "interval": "10m",
                "releaseName": name,
                "targetNamespace": "apps",
                "storageNamespace": "apps",
                "chart": {
                    "spec": {
                        "chart": name,
                        "version": version,
                        "sourceRef": {"kind": "HelmRepository", "name": name},
                    }
                },
                **spec,
            },
        }
        try:
            live = self.store.get(HELM_RELEASE, name, NS)
        except NotFound:
            self.store.create(HELM_REPOSITORY, source)
            self.store.create(HELM_RELEASE, body)
        else:
            self.store.update(HELM_RELEASE, {**live, "spec": body["spec"]})
        self.settle()

    def put_oci(self, tag: str) -> None:
        """An OCIRepository tagged `tag` and a HelmRelease `app` referring to it, as the agent
        writes them for an oci:// chart: a new tag changes the source only."""
        source = {
            "metadata": {"name": "app", "namespace": NS},
            "spec": {
                "url": "oci://registry.example/charts/podinfo",
                "interval": "10m",
                "ref": {"tag": tag},
            },
        }
        try:
            live = self.store.get(OCI_REPOSITORY, "app", NS)
        except NotFound:
            self.store.create(OCI_REPOSITORY, source)
            self.store.create(
                HELM_RELEASE,
                {
                    "metadata": {"name": "app", "namespace": NS},
                    "spec": {
                        "interval": "10m",
                        "releaseName": "app",
                        "targetNamespace": "apps",
                        "storageNamespace": "apps",
                        "chartRef": {"kind": "OCIRepository", "name": "app", "namespace": NS},
                    },
                },
            )
        else:
            self.store.update(OCI_REPOSITORY, {**live, "spec": source["spec"]})
        self.settle()

    def release(self, name: str = "app") -> Obj:
        found = self.store.get(HELM_RELEASE, name, NS)
        validate(found)
        return found

    def ready(self, name: str = "app") -> dict[str, Any]:
        conditions = self.release(name)["status"]["conditions"]
        ready: dict[str, Any] = next(c for c in conditions if c["type"] == "Ready")
        return ready


@pytest.fixture
def make_flux() -> Iterator[Any]:
    made: list[FluxWorld] = []

    def make(**settings: Any) -> FluxWorld:
        world = FluxWorld(FluxSettings(**settings))
        world.flux.start()
        world.host.start()
        made.append(world)
        return world

    yield make
    for world in made:
        world.host.stop(WAIT)
        world.flux.informer.stop()


def test_install_takes_the_delay_then_is_ready(make_flux: Any) -> None:
    world = make_flux(delay=DELAY)
    world.put()
    release = world.release()
    assert release["metadata"]["finalizers"] == [FLUX_FINALIZER]
    assert "observedGeneration" not in release["status"]
    assert (world.ready()["status"], world.ready()["reason"]) == ("Unknown", "Progressing")
    assert world.flux.busy()
    world.advance(DELAY)
    status = world.release()["status"]
    assert status["observedGeneration"] == 1
    assert (world.ready()["status"], world.ready()["reason"]) == ("True", "InstallSucceeded")
    assert world.ready()["message"] == (
        "Helm install succeeded for release apps/app.v1 with chart app@1.0.0"
    )
    assert [(h["version"], h["status"]) for h in status["history"]] == [(1, "deployed")]
    assert world.flux.releases() == {
        ("apps", "app"): InstalledRelease("app", "apps", "app", "1.0.0", 1, "deployed")
    }
    assert not world.flux.busy()


def test_upgrades_supersede_and_a_failed_one_stays_failed(make_flux: Any) -> None:
    world = make_flux(failures=FailurePolicy(versions=frozenset({"3.0.0"})))
    world.put(version="1.0.0")
    world.put(version="2.0.0")
    assert world.ready()["reason"] == "UpgradeSucceeded"
    world.put(version="3.0.0")
    ready = world.ready()
    assert (ready["status"], ready["reason"]) == ("False", "UpgradeFailed")
    assert ready["message"].startswith(
        "Helm upgrade failed for release apps/app with chart app@3.0.0: simulated failure"
    )
    status = world.release()["status"]
    assert status["observedGeneration"] == 3
    assert [(h["version"], h["chartVersion"], h["status"]) for h in status["history"]] == [
        (3, "3.0.0", "failed"),
        (2, "2.0.0", "deployed"),
        (1, "1.0.0", "superseded"),
    ]
    assert status["upgradeFailures"] == 1
    world.advance(600)
    assert world.release()["status"]["history"][0]["version"] == 3, "failed release retried"


def test_install_failure_by_label(make_flux: Any) -> None:
    world = make_flux(failures=FailurePolicy(labels={"env": "prod"}))
    world.put()
    ready = world.ready()
    assert (ready["status"], ready["reason"]) == ("False", "InstallFailed")
    assert "env=prod" in ready["message"]


def test_history_is_capped_at_max_history(make_flux: Any) -> None:
    world = make_flux()
    for minor in range(5):
        world.put(version=f"1.{minor}.0", maxHistory=3)
    assert [h["version"] for h in world.release()["status"]["history"]] == [5, 4, 3]


def test_deleting_uninstalls_unless_suspended(make_flux: Any) -> None:
    world = make_flux()
    world.put("dropped")
    world.put("kept")
    world.store.patch(HELM_RELEASE, "kept", {"spec": {"suspend": True}}, NS)
    world.settle()
    for name in ("dropped", "kept"):
        world.store.delete(HELM_RELEASE, name, NS)
    world.settle()
    assert world.store.list(HELM_RELEASE, NS).items == []
    assert list(world.flux.releases()) == [("apps", "kept")]


def test_suspended_releases_are_not_reconciled(make_flux: Any) -> None:
    world = make_flux()
    world.put(version="1.0.0")
    world.store.patch(HELM_RELEASE, "app", {"spec": {"suspend": True}}, NS)
    world.put(version="2.0.0", suspend=True)
    assert world.release()["status"]["history"][0]["chartVersion"] == "1.0.0"


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        ("missing-dependency", "DependencyNotReady"),
        ("missing-source", "ArtifactFailed"),
        ("missing-kubeconfig", "RESTClientError"),
    ],
    ids=["dependency", "source", "kubeconfig"],
)
def test_blocked_releases_wait(make_flux: Any, setup: str, reason: str) -> None:
    world = make_flux(retry=5.0)
    if setup == "missing-dependency":
        world.put(dependsOn=[{"name": "db", "namespace": NS}])
    elif setup == "missing-source":
        world.put(
            chart={
                "spec": {
                    "chart": "app",
                    "version": "1",
                    "sourceRef": {"kind": "HelmRepository", "name": "absent"},
                }
            }
        )
    else:
        world.put(kubeConfig={"secretRef": {"name": "edge-kubeconfig", "key": "value"}})
    ready = world.ready()
    assert (ready["status"], ready["reason"]) == ("False", reason)
    assert "observedGeneration" not in world.release()["status"]
    if setup == "missing-dependency":
        world.put("db")
    elif setup == "missing-source":
        world.store.create(
            HELM_REPOSITORY,
            {
                "metadata": {"name": "absent", "namespace": NS},
                "spec": {"url": "https://x", "interval": "1m"},
            },
        )
    else:
        world.store.create(SECRET, {"metadata": {"name": "edge-kubeconfig", "namespace": NS}})
    world.advance(5.0)
    assert world.ready()["status"] == "True"


def test_oci_chart_version_comes_from_the_source_tag(make_flux: Any) -> None:
    world = make_flux()
    world.put_oci("6.7.1_build.1")
    latest = world.release()["status"]["history"][0]
    assert (latest["chartName"], latest["chartVersion"]) == ("podinfo", "6.7.1+build.1")


def test_a_new_oci_tag_upgrades_the_release(make_flux: Any) -> None:
    world = make_flux(delay=DELAY, failures=FailurePolicy(versions=frozenset({"6.2.0"})))
    world.put_oci("6.0.0")
    world.advance(DELAY)
    assert world.ready()["reason"] == "InstallSucceeded"

    world.put_oci("6.1.0")
    assert world.release()["metadata"]["generation"] == 1, "the HelmRelease spec is unchanged"
    assert (world.ready()["status"], world.ready()["reason"]) == ("Unknown", "Progressing")
    assert world.release()["status"]["history"][0]["chartVersion"] == "6.0.0"
    world.advance(DELAY)
    status = world.release()["status"]
    assert (world.ready()["status"], world.ready()["reason"]) == ("True", "UpgradeSucceeded")
    assert world.ready()["message"] == (
        "Helm upgrade succeeded for release apps/app.v2 with chart podinfo@6.1.0"
    )
    assert [(h["version"], h["chartVersion"], h["status"]) for h in status["history"]] == [
        (2, "6.1.0", "deployed"),
        (1, "6.0.0", "superseded"),
    ]
    assert world.flux.releases()[("apps", "app")] == InstalledRelease(
        "app", "apps", "podinfo", "6.1.0", 2, "deployed"
    )

    world.put_oci("6.2.0")
    world.advance(DELAY)
    assert (world.ready()["status"], world.ready()["reason"]) == ("False", "UpgradeFailed")
    world.advance(600)
    latest = world.release()["status"]["history"][0]
    assert (latest["version"], latest["chartVersion"], latest["status"]) == (3, "6.2.0", "failed")


def test_a_tag_change_during_an_upgrade_releases_the_new_tag(make_flux: Any) -> None:
    world = make_flux(delay=DELAY)
    world.put_oci("6.0.0")
    world.advance(DELAY)
    world.put_oci("6.1.0")
    world.advance(DELAY / 2)
    world.put_oci("6.2.0")
    world.advance(DELAY / 2)
    assert world.flux.busy(), "the upgrade to 6.2.0 started when the tag changed"
    world.advance(DELAY / 2)
    history = world.release()["status"]["history"]
    assert [(h["version"], h["chartVersion"]) for h in history] == [(2, "6.2.0"), (1, "6.0.0")]
