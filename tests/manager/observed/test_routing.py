"""Changes trigger exactly the work they affect: counted in rendered rows and in writes."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER, CLUSTER_GROUP, SECRET
from bundler.manager.observed.indexes import credential_secrets
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.builders import WS, bundle, cluster, group
from tests.support.manager.registry_charts import basic_auth_secret
from tests.support.manager.world import (
    CountingStore,
    StartManager,
    check_in,
    create_world,
    deployments,
    report,
    settle,
    world,
)

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
CREDS = {"secretRef": {"name": "creds"}}


def test_deployment_status_change_only_rolls_up_status(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL)))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    rendered = manager.rows_rendered
    counting.reset()
    report(store, "a")
    settle(manager)
    assert manager.rows_rendered == rendered
    assert {verb for verb, _ in counting.writes} == {"patch_status"}
    assert {plural for _, plural in counting.writes} == {"bundles", "clusters"}


def test_deployment_status_change_rolls_up_only_its_placement(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(*[cluster(f"c{i}") for i in range(6)], bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    rolled_up = manager.placements_rolled_up
    report(store, "c3")
    settle(manager)
    assert manager.placements_rolled_up == rolled_up + 1
    assert store.get(BUNDLE, "app", WS)["status"]["display"]["readyClusters"] == "1/6"


def test_heartbeat_of_an_online_agent_writes_nothing(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    create_world(store, world(cluster("a"), bundle(ALL)))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    counting.reset()
    for _ in range(3):
        clock.advance(30)
        check_in(store, clock, "a")
        settle(manager)
    assert counting.total() == 0


def test_bundle_change_renders_only_that_bundle(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster(f"c{i}") for i in range(4)]
    create_world(store, world(*clusters, bundle(ALL, name="one"), bundle(ALL, name="two")))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    rendered = manager.rows_rendered
    counting.reset()
    store.patch(BUNDLE, "one", {"spec": {"helm": {"values": {"v": 1}}}}, WS)
    settle(manager)
    assert manager.rows_rendered == rendered + 4
    assert counting.writes[("update", "bundledeployments")] == 4
    assert all(
        ("v" in (bd["spec"]["options"]["helm"].get("values") or {})) == (name == "one")
        for (_, name), bd in deployments(store).items()
    )


def test_group_change_renders_only_clusters_it_moves(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster(f"c{i}", {"env": "a" if i < 2 else "b"}) for i in range(4)]
    staged = group("staged", {"matchLabels": {"env": "a"}})
    create_world(store, world(*clusters, staged, bundle([{"clusterGroup": "staged"}])))
    manager = start_manager(store)
    settle(manager)
    rendered = manager.rows_rendered
    assert sorted(deployments(store)) == [("c0", "app"), ("c1", "app")]
    store.patch(CLUSTER_GROUP, "staged", {"spec": {"selector": {"matchLabels": {"env": "b"}}}}, WS)
    settle(manager)
    assert sorted(deployments(store)) == [("c2", "app"), ("c3", "app")]
    assert manager.rows_rendered == rendered + 2


def test_annotation_change_renders_the_row_again(
    store: MemoryStore, start_manager: StartManager
) -> None:
    values = {"values": {"owner": "${ cluster.annotations.owner | default('none') }"}}
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=values)))
    manager = start_manager(store)
    settle(manager)
    rendered = manager.rows_rendered
    store.patch(CLUSTER, "a", {"metadata": {"annotations": {"owner": "team-x"}}}, WS)
    settle(manager)
    assert manager.rows_rendered == rendered + 1
    assert deployments(store)[("a", "app")]["spec"]["options"]["helm"]["values"] == {
        "owner": "team-x"
    }


def test_restarted_manager_writes_nothing_to_an_unchanged_world(
    store: MemoryStore, start_manager: StartManager
) -> None:
    regions = [cluster(f"c{i}", {"region": "eu"} if i % 3 else {}) for i in range(9)]
    region_values = {"values": {"region": "${ cluster.labels.region }"}, **CREDS}
    store.create(SECRET, basic_auth_secret("creds", "u", "p"))
    create_world(
        store,
        world(
            *regions,
            group("all", {}),
            bundle(ALL, name="one", helm=region_values),
            bundle([{"clusterName": "nowhere"}], name="two"),
            bundle(ALL, name="three", helm={"releaseName": "Not_Valid"}),
        ),
    )
    first = start_manager(store)
    settle(first)
    report(store, "c1", "one")
    settle(first)
    first.stop()
    counting = CountingStore(store)
    settle(start_manager(counting))
    assert counting.total() == 0


def test_a_secret_wakes_only_the_bundles_that_name_it(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, basic_auth_secret("creds", "u", "p"))
    by_target = [{"clusterSelector": {}, "helm": CREDS}]
    inputs = world(
        cluster("a"),
        bundle(ALL, name="direct", helm=CREDS),
        bundle(by_target, name="by-target"),
        bundle(ALL, name="other"),
    )
    create_world(store, inputs)
    manager = start_manager(store)
    settle(manager)
    queue = manager.host.queue
    queue.pause()  # what the events enqueue stays countable
    try:
        store.create(SECRET, basic_auth_secret("unrelated", "u", "p"))
        store.patch(SECRET, "unrelated", {"data": {"password": _encoded("changed")}}, WS)
        store.patch(SECRET, "creds", {"metadata": {"annotations": {"note": "not copied"}}}, WS)
        assert len(queue) == 0
        store.patch(SECRET, "creds", {"data": {"password": _encoded("rotated")}}, WS)
        assert len(queue) == 2  # "direct" and "by-target", not "other"
    finally:
        queue.resume()
    settle(manager)


def _encoded(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"helm": {"chart": "app"}}, set()),
        ({"helm": CREDS}, {"creds"}),
        ({"targets": [{"name": "t"}, {"helm": {"secretRef": {"name": "t-creds"}}}]}, {"t-creds"}),
        ({"helm": CREDS, "targets": [{"helm": CREDS}]}, {"creds"}),
        ({"helm": {"secretRef": {"name": 5}}, "targets": {"helm": CREDS}}, set()),
        ({"helm": {"secretRef": {"name": ""}}, "targets": ["not a target"]}, set()),
        ([], set()),
    ],
    ids=["none", "spec", "target", "both-once", "malformed-types", "empty-name", "not-a-spec"],
)
def test_the_secrets_a_bundle_names(spec: Obj, expected: set[str]) -> None:
    raw = {"metadata": {"name": "app", "namespace": WS}, "spec": spec}
    assert credential_secrets(raw) == expected


def test_group_memberships_are_remembered_only_for_clusters_as_they_are(
    store: MemoryStore, start_manager: StartManager
) -> None:
    """Label changes and deleted clusters do not pile up in the memberships memo."""
    create_world(store, world(cluster("a"), cluster("b"), group("g", {}), bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    for n in range(5):
        store.patch(CLUSTER, "a", {"metadata": {"labels": {"n": str(n)}}}, WS)
        settle(manager)
    store.delete(CLUSTER, "b", WS)
    settle(manager)
    scope = manager.ctx.scopes.all[0]
    assert len(scope._memberships) <= 1  # the memo itself: its size is what is tested


def test_capped_bundle_resumes_without_deciding_or_rendering_any_cluster_again(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster(f"c{i}") for i in range(7)]
    create_world(store, world(*clusters, bundle(ALL, rolloutStrategy={"maxNew": 2})))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    assert len(deployments(store)) == 7
    assert counting.writes[("create", "bundledeployments")] == 7
    assert (manager.rows_decided, manager.rows_rendered) == (7, 7)


def test_capped_bundle_continues_with_its_batch_not_every_cluster(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(*[cluster(f"c{i}") for i in range(12)]))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    planned = manager.rows_planned
    counting.reset()
    store.create(BUNDLE, bundle(ALL, rolloutStrategy={"maxNew": 3}).to_wire())
    settle(manager)
    assert len(deployments(store)) == 12
    assert counting.writes[("create", "bundledeployments")] == 12
    # One full pass, then the batches it left: four full passes would look at 48 rows.
    assert manager.rows_planned - planned == 12 + 3 + 3 + 3
    # Roll-ups wait for the creations: one status per cluster and one for the Bundle.
    assert counting.writes[("patch_status", "clusters")] == 12
    assert counting.writes[("patch_status", "bundles")] == 1


def test_change_during_a_capped_rollout_is_planned_in_full(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(*[cluster(f"c{i}") for i in range(6)]))
    manager = start_manager(store)
    settle(manager)
    strategy = {"maxNew": 2, "maxUnavailable": 1}
    store.create(BUNDLE, bundle(ALL, rolloutStrategy=strategy).to_wire())
    settle(manager)
    assert len(deployments(store)) == 6
    planned = manager.rows_planned
    # Not decided alone (one unavailable cluster fills the budget): every pass is a full one.
    assert planned % 6 == 0


def test_change_of_an_untargeted_cluster_writes_nothing(
    store: MemoryStore, start_manager: StartManager
) -> None:
    prod = [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]
    prod_clusters = [cluster(f"p{i}", {"env": "prod"}) for i in range(3)]
    create_world(store, world(*prod_clusters, cluster("b", {"env": "dev"}), bundle(prod)))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    planned = manager.rows_planned
    counting.reset()
    store.patch(CLUSTER, "b", {"metadata": {"labels": {"team": "x"}}}, WS)
    settle(manager)
    # That cluster's row alone is looked at (a full pass would look at the three targeted).
    assert manager.rows_planned == planned + 1
    assert counting.writes[("update", "bundledeployments")] == 0
    assert set(deployments(store)) == {(f"p{i}", "app") for i in range(3)}


def test_label_change_decides_and_renders_only_that_clusters_rows(
    store: MemoryStore, start_manager: StartManager
) -> None:
    region = {"values": {"region": "${ cluster.labels.region }"}}
    clusters = [cluster(f"c{i}", {"region": "eu"}) for i in range(5)]
    bundles = [bundle(ALL, name=f"b{i}", helm=region) for i in range(3)]
    create_world(store, world(*clusters, *bundles))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    decided, rendered, planned = manager.rows_decided, manager.rows_rendered, manager.rows_planned
    counting.reset()
    store.patch(CLUSTER, "c2", {"metadata": {"labels": {"region": "us"}}}, WS)
    settle(manager)
    assert (manager.rows_decided, manager.rows_rendered) == (decided + 3, rendered + 3)
    # Each Bundle's pass looks at that cluster's row alone, not at the five of its fleet.
    assert manager.rows_planned == planned + 3
    assert counting.writes[("update", "bundledeployments")] == 3
    changed = {key for key, bd in deployments(store).items() if "us" in str(bd["spec"])}
    assert changed == {("c2", "b0"), ("c2", "b1"), ("c2", "b2")}
