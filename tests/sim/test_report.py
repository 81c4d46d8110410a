"""The sim's report: figures read from Bundle and Cluster statuses, as a table or as JSON."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER
from bundler.api.summary import NON_READY_MAX
from bundler.inputs import World
from bundler.sim.bench import run as bench
from bundler.sim.generated import DEFAULT_WORKSPACE, busiest_workspace, generated_clusters
from bundler.sim.report import collect, format_table, progress_line
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle


def with_status(obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "status": status}


def ready(flag: bool) -> list[dict[str, str]]:
    return [{"type": "Ready", "status": "True" if flag else "False", "reason": "x"}]


def fleet_store() -> MemoryStore:
    store = MemoryStore()
    for name, state, desired in (("c1", True, 1), ("c2", False, 1), ("empty", True, 0)):
        store.create(CLUSTER, {"metadata": {"name": name, "namespace": WS}})
        cluster_status = {"conditions": ready(state), "summary": {"desiredReady": desired}}
        store.patch_status(CLUSTER, name, {"status": cluster_status}, WS)
    store.create(BUNDLE, bundle(name="web").to_wire())
    status = {
        "resolvedVersion": "1.2.3",
        "summary": {"desiredReady": 14, "ready": 2, "notReady": 12},
        "display": {"readyClusters": "2/14", "state": "NotReady"},
        "nonReady": [
            {"cluster": f"{WS}/c{i}", "state": "NotReady", "message": f"UpgradeFailed: {i}"}
            for i in range(10)
        ],
        "conditions": ready(False),
    }
    store.patch_status(BUNDLE, "web", {"status": status}, WS)
    return store


def test_table_lists_bundles_and_their_non_ready_clusters() -> None:
    report = collect(fleet_store(), converged=True, elapsed=2.25)
    table = format_table(report)
    lines = table.splitlines()
    assert lines[0] == (
        "converged, NOT all ready in 2.2s: 1/2 targeted clusters ready (1 untargeted), 1 bundles"
    )
    assert lines[2].split() == ["BUNDLE", "VERSION", "READY", "STATE", "COUNTS"]
    assert lines[3].split() == [f"{WS}/web", "1.2.3", "2/14", "NotReady", "ready=2", "notReady=12"]
    assert lines[4].strip() == f"{WS}/c0  NotReady  UpgradeFailed: 0"
    assert lines[14].strip() == "... and 2 more not ready"
    assert lines[16] == "CLUSTERS NOT READY"
    assert len(lines) == 18


def test_json_carries_the_same_figures_with_camel_case_keys() -> None:
    report = collect(fleet_store(), converged=False, elapsed=1.0).to_json()
    assert (report["converged"], report["succeeded"]) == (False, False)
    assert (report["clustersTargeted"], report["clustersReady"]) == (2, 1)
    assert report["nonReadyClusters"] == [{"cluster": f"{WS}/c2", "reason": "x", "message": ""}]
    (web,) = report["bundles"]
    assert (web["ready"], web["desired"], web["unlisted"], web["version"]) == (2, 14, 2, "1.2.3")
    assert web["counts"]["notReady"] == 12


def test_untargeted_clusters_are_not_counted_ready() -> None:
    report = collect(fleet_store(), converged=True, elapsed=1.0)
    assert (report.clusters, report.clusters_targeted, report.clusters_ready) == (3, 2, 1)


def test_clusters_not_ready_are_capped_like_the_bundle_list() -> None:
    store = MemoryStore()
    for index in range(NON_READY_MAX + 3):
        store.create(CLUSTER, {"metadata": {"name": f"c{index:02}", "namespace": WS}})
        store.patch_status(CLUSTER, f"c{index:02}", {"status": {"conditions": ready(False)}}, WS)
    report = collect(store, converged=True, elapsed=1.0)
    assert (len(report.non_ready_clusters), report.unlisted_clusters) == (NON_READY_MAX, 3)
    assert format_table(report).splitlines()[-1].strip() == "... and 3 more not ready"


@pytest.mark.parametrize(
    ("converged", "status", "succeeded"),
    [
        (True, {"summary": {"desiredReady": 2, "ready": 2}, "conditions": ready(True)}, True),
        (False, {"summary": {"desiredReady": 2, "ready": 2}, "conditions": ready(True)}, False),
        (True, {"summary": {"desiredReady": 2, "ready": 1, "errApplied": 1}}, False),
        (True, {"conditions": [{"type": "Ready", "status": "False", "reason": "NoTargets"}]}, True),
        (True, {"conditions": [{"type": "Ready", "status": "False", "reason": "Invalid"}]}, False),
    ],
    ids=["all-ready", "not-at-rest", "err-applied", "no-targets-is-a-warning", "held-back"],
)
def test_a_run_succeeds_only_at_rest_with_every_bundle_ready(
    converged: bool, status: dict[str, Any], succeeded: bool
) -> None:
    store = MemoryStore()
    store.create(BUNDLE, bundle(name="web").to_wire())
    store.patch_status(BUNDLE, "web", {"status": status}, WS)
    assert collect(store, converged=converged, elapsed=1.0).succeeded is succeeded


def test_progress_line() -> None:
    assert progress_line(fleet_store(), 3.04) == "t=3.0s bundles ready 0/1, targeted clusters 1/2"


def test_generated_clusters_are_reproducible_and_varied() -> None:
    first = generated_clusters(30, WS, seed=4)
    assert [c.to_wire() for c in first] == [c.to_wire() for c in generated_clusters(30, WS, 4)]
    assert first[0].metadata.name == "sim-0001"
    assert {c.metadata.namespace for c in first} == {WS}
    assert len({c.metadata.labels["env"] for c in first}) == 3
    assert len({c.metadata.labels["region"] for c in first}) == 3


def test_generated_clusters_go_where_most_bundles_are() -> None:
    assert busiest_workspace(World()) == DEFAULT_WORKSPACE
    world = World(bundles=[bundle(name="a"), bundle(name="b")])
    assert busiest_workspace(world) == WS


def test_bench_reports_figures() -> None:
    lines = bench(clusters=4, bundles=2, workers=2, timeout=60.0)
    assert lines[0].startswith("initial roll-out: 4 clusters x 2 bundles = 8 BundleDeployments")
    assert lines[-1] == "ready BundleDeployments at the end: 8/8"


def test_a_bundle_held_back_as_a_whole_says_why() -> None:
    store = MemoryStore()
    store.create(BUNDLE, bundle(name="app").to_wire())
    held = {
        "type": "Ready",
        "status": "False",
        "reason": "CredentialsNotFound",
        "message": "Secret ws/creds does not exist",
    }
    status = {"summary": {"desiredReady": 0}, "display": {"readyClusters": "0/0"}}
    store.patch_status(BUNDLE, "app", {"status": {**status, "conditions": [held]}}, WS)
    report = collect(store, converged=True, elapsed=0.1)
    (line,) = [line for line in format_table(report).splitlines() if line.startswith("    ")]
    assert line.strip() == "CredentialsNotFound: Secret ws/creds does not exist"
    assert report.to_json()["bundles"][0]["reason"] == "CredentialsNotFound"


def test_a_bundle_shows_its_resolved_images_and_why_one_is_not() -> None:
    store = MemoryStore()
    store.create(BUNDLE, bundle(name="app").to_wire())
    web = {"name": "web", "repository": "reg.example/web", "tag": "1.2.0", "digest": "sha256:1"}
    staged = {**web, "tag": "2.0.0-rc.1", "target": "staging"}
    unresolved = {
        "type": "ImagesResolved",
        "status": "False",
        "reason": "RegistryUnavailable",
        "message": "image proxy: RegistryUnavailable: reg.example/proxy: connection refused",
    }
    status = {"resolvedImages": [web, staged], "conditions": [*ready(True), unresolved]}
    store.patch_status(BUNDLE, "app", {"status": status}, WS)
    report = collect(store, converged=True, elapsed=0.1)
    lines = [line.strip() for line in format_table(report).splitlines() if line.startswith("    ")]
    assert lines == [
        "image web: reg.example/web:1.2.0",
        "image web (target staging): reg.example/web:2.0.0-rc.1",
        f"ImagesResolved=False RegistryUnavailable: {unresolved['message']}",
    ]
    (shown,) = report.to_json()["bundles"]
    assert [i["tag"] for i in shown["images"]] == ["1.2.0", "2.0.0-rc.1"]
    assert shown["imagesProblem"].startswith("RegistryUnavailable: image proxy")
