"""On the realistic fleet of bundler.sim.realistic (per-cluster hosts and IDs, overrides by
environment and group, lists turned into maps): one cluster's label change plans again only that
cluster's rows, rolls up again only that cluster's share of its groups' status (walking no group's
workspace again), and writes only
that cluster's BundleDeployments."""

from __future__ import annotations

import pytest

from bundler.api.resources import CLUSTER
from bundler.sim.realistic import realistic_bundles, realistic_clusters, realistic_groups
from bundler.store.memory import MemoryStore
from tests.support.builders import WS
from tests.support.manager.world import (
    CountingStore,
    StartManager,
    create_world,
    deployments,
    settle,
    world,
)

CLUSTERS = 24
BUNDLES = 8


@pytest.mark.parametrize(
    ("label", "value", "redeploys"),
    [
        pytest.param("region", "changed-region", True, id="a label templates read"),
        pytest.param("team", "changed-team", False, id="a label nothing reads"),
    ],
)
def test_a_label_change_plans_only_that_clusters_rows(
    store: MemoryStore, start_manager: StartManager, label: str, value: str, redeploys: bool
) -> None:
    clusters = realistic_clusters(CLUSTERS)
    assert {c.metadata.namespace for c in clusters} == {WS}
    create_world(store, world(*clusters, *realistic_groups(), *realistic_bundles(BUNDLES)))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    before = deployments(store)
    assert before
    changed = clusters[CLUSTERS // 2].metadata.name
    planned, rendered = manager.rows_planned, manager.rows_rendered
    members = manager.group_members_made
    assert members
    walks = manager.group_walks
    assert walks
    counting.reset()
    store.patch(CLUSTER, changed, {"metadata": {"labels": {label: value}}}, WS)
    settle(manager)
    assert manager.rows_planned - planned <= BUNDLES
    assert manager.rows_rendered - rendered <= BUNDLES
    # The groups' status rolls up again only what the changed cluster adds to it.
    made = manager.group_members_made
    assert {name for name, count in made.items() if count != members.get(name)} <= {
        f"{WS}/{changed}"
    }
    assert manager.group_walks == walks
    after = deployments(store)
    assert sorted(after) == sorted(before)
    moved = {key for key in after if after[key]["spec"] != before[key]["spec"]}
    assert {cluster for cluster, _ in moved} == ({changed} if redeploys else set())
    writes = {plural for (_, plural) in counting.writes}
    assert writes <= {"bundledeployments", "bundles", "clusters"}
    assert counting.writes.get(("update", "bundledeployments"), 0) == len(moved)
