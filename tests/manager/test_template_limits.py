"""A hostile Bundle through the running manager: its render is stopped at the OS bound in a
template worker, that cluster gets TemplateLimitExceeded, and every other cluster and Bundle is
planned as usual."""

from __future__ import annotations

from typing import Any

from bundler.api.resources import BUNDLE
from bundler.store.memory import MemoryStore
from bundler.templating_pool import TemplateLimits
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.world import (
    StartManager,
    create_world,
    deployments,
    settle,
    status_of,
    world,
)
from tests.support.templating_pool.hostile import HOLDS_40_MB

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
#: 40 MB held, only for the cluster labelled hostile: far over a 16 MiB limit, under the budget.
HOSTILE_VALUES = {
    "values": {
        "name": "${ cluster.name }",
        "blob": "${% if (cluster.labels.hostile | default('')) == 'yes' %}"
        + HOLDS_40_MB
        + "${% endif %}",
    }
}


def test_a_hostile_render_is_stopped_and_confined_to_its_cluster(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster("good-1"), cluster("good-2"), cluster("victim", {"hostile": "yes"})]
    hostile = bundle(ALL, name="app", helm=HOSTILE_VALUES)
    other = bundle(ALL, name="other", helm={"values": {"at": "${ cluster.name }"}})
    create_world(store, world(*clusters, hostile, other))
    settle(start_manager(store, template_limits=TemplateLimits(memory_mib=16)))
    planned = deployments(store)
    assert set(planned) == {
        ("good-1", "app"),
        ("good-2", "app"),
        ("good-1", "other"),
        ("good-2", "other"),
        ("victim", "other"),
    }
    assert planned[("good-1", "app")]["spec"]["options"]["helm"]["values"] == {
        "name": "good-1",
        "blob": "",
    }
    assert planned[("victim", "other")]["spec"]["options"]["helm"]["values"] == {"at": "victim"}
    status = status_of(store, BUNDLE, "app")
    (victim,) = [e for e in status["nonReady"] if e["cluster"] == f"{WS}/victim"]
    assert victim["message"] == (
        f"Bundle {WS}/app for Cluster {WS}/victim: values.blob: rendering needed more than the"
        " --template-memory limit of 16 MiB; stopped it"
    )


#: About 400 KiB rendered for each cluster, none shared: three clusters pass a 1 MiB allowance.
BY_NAME_400K = {"values": {"blob": "x" * 400_000 + "${ cluster.name }"}}


def test_a_bundle_rendering_much_for_every_cluster_is_held_to_its_allowance(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster("c-1"), cluster("c-2"), cluster("c-3")]
    heavy = bundle(ALL, name="heavy", helm=BY_NAME_400K)
    other = bundle(ALL, name="other", helm={"values": {"at": "${ cluster.name }"}})
    create_world(store, world(*clusters, heavy, other))
    settle(start_manager(store, template_bundle_mib=1))
    planned = deployments(store)
    assert {c for c, b in planned if b == "heavy"} == {"c-1", "c-2"}
    assert {c for c, b in planned if b == "other"} == {"c-1", "c-2", "c-3"}
    status = status_of(store, BUNDLE, "heavy")
    (refused,) = [e for e in status["nonReady"] if "--template-bundle-memory" in e["message"]]
    assert refused["cluster"] == f"{WS}/c-3"
    assert "the --template-bundle-memory limit of 1 MiB" in refused["message"]
