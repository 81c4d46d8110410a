"""The simulated kustomize-controller in a simulated fleet: a Kustomize Bundle reaches a pull and
a remote cluster Ready, a new artifact tag is applied without a new Kustomization spec, and a
deleted Bundle's manifests are pruned (kept with keepResources); examples/kustomize converges."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, KUSTOMIZATION, NAMESPACE, OCI_REPOSITORY
from bundler.commands import sim
from bundler.core.naming import cluster_namespace
from bundler.runtime.clock import ManualClock
from bundler.sim.fleet import Fleet, FleetOptions
from bundler.sim.kustomize_controller import SimulatedKustomizeController
from tests.support.builders import ARTIFACT, WS, cluster, kustomize_bundle
from tests.support.cli_helpers import run_command
from tests.support.manager.sim_driver import run_until, running_fleet
from tests.support.manager.world import world
from tests.support.sim.examples import EXAMPLES, FAST

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
SUBSTITUTE = {"postBuild": {"substitute": {"cluster_name": "${ cluster.name }"}}}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def _ready(fleet: Fleet, ready: str) -> bool:
    display = (fleet.store.get(BUNDLE, "app", WS).get("status") or {}).get("display") or {}
    return display.get("readyClusters") == ready


@pytest.mark.parametrize("keep", [False, True], ids=["pruned", "kept"])
def test_a_kustomize_bundle_is_applied_rolled_to_a_new_tag_and_pruned(
    clock: ManualClock, keep: bool
) -> None:
    edge = cluster("edge", agentMode="remote", kubeConfigSecret="edge-kubeconfig")
    bundle = kustomize_bundle(ALL, kustomize=SUBSTITUTE, keepResources=keep)
    with running_fleet(
        world(cluster("pulled"), edge, bundle), FleetOptions(flux_delay=1.0), clock
    ) as fleet:
        fleet.store.create(NAMESPACE, {"metadata": {"name": WS}})
        fleet.start()
        run_until(fleet, clock, lambda: _ready(fleet, "2/2"), "the bundle to read 2/2")
        pulled = next(sim for sim in fleet.clusters if sim.cluster.metadata.name == "pulled")
        assert pulled.store is not None
        live = pulled.store.get(KUSTOMIZATION, "app", "bundler-system")
        assert live["spec"]["postBuild"] == {"substitute": {"cluster_name": "pulled"}}
        assert live["status"]["lastAppliedRevision"].startswith("1.0.0@sha256:")
        remote = fleet.store.get(KUSTOMIZATION, "app", cluster_namespace(WS, "edge"))
        assert remote["spec"]["kubeConfig"]["secretRef"]["name"] == "edge-kubeconfig"

        new_tag = {"spec": {"kustomize": {"source": {"oci": {"url": ARTIFACT, "tag": "1.1.0"}}}}}
        fleet.store.patch(BUNDLE, "app", new_tag, WS)

        def on_new_tag() -> bool:
            assert pulled.store is not None
            source = pulled.store.get(OCI_REPOSITORY, "app", "bundler-system")
            applied = pulled.store.get(KUSTOMIZATION, "app", "bundler-system")["status"]
            return (
                source["spec"]["ref"]["tag"] == "1.1.0"
                and applied.get("lastAppliedRevision", "").startswith("1.1.0@")
                and _ready(fleet, "2/2")
            )

        run_until(fleet, clock, on_new_tag, "the new tag to be applied on both clusters")
        controllers = [c for c in pulled.flux if isinstance(c, SimulatedKustomizeController)]
        assert len(controllers) == 1
        (revision,) = controllers[0].applied().values()
        assert revision.startswith("1.1.0@")

        fleet.store.delete(BUNDLE, "app", WS)

        def gone() -> bool:
            assert pulled.store is not None
            return not pulled.store.list(KUSTOMIZATION, "bundler-system").items

        run_until(fleet, clock, gone, "the Kustomization to be deleted")
        assert bool(controllers[0].applied()) is keep


def test_the_kustomize_example_converges_in_the_simulator(
    capsys: pytest.CaptureFixture[str],
) -> None:
    inputs = ["-f", str(EXAMPLES / "kustomize"), "-f", str(EXAMPLES / "podinfo")]
    assert run_command("sim", *inputs, *FAST, "--json") == sim.EXIT_CONVERGED
    report = json.loads(capsys.readouterr().out)
    found = {b["bundle"]: (b["version"], b["ready"], b["state"]) for b in report["bundles"]}
    assert found["fleet-default/podinfo-manifests"] == ("6.7.1", 5, "Ready")
