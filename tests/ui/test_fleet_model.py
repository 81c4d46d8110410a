"""The Fleet page's model: a cell per targeted (Bundle, Cluster) with the placement's state,
kept by watch events, and told as absolute changes."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, CLUSTER_GROUP, Resource
from bundler.store.protocol import EventType
from bundler.ui.fleet_model import NO_CELL, STATES, FleetModel
from tests.support.builders import (
    APPLY_FAILED,
    UPGRADE_FAILED,
    WS,
    bundle,
    cluster,
    group,
    placed_deployment,
)

PROD = [{"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}]


def bd(bundle_name: str, cluster_name: str, **kwargs: Any) -> dict[str, Any]:
    return placed_deployment(bundle_name, cluster_name, **kwargs)


def offline(name: str, labels: dict[str, str]) -> dict[str, Any]:
    obj = cluster(name, labels).to_wire()
    obj["status"] = {
        "conditions": [{"type": "Ready", "status": "False", "reason": "Offline", "message": "gone"}]
    }
    return obj


def put(model: FleetModel, res: Resource, obj: dict[str, Any]) -> None:
    model.apply(res, EventType.ADDED, obj)


def cell(model: FleetModel, bundle_name: str, cluster_name: str) -> str:
    """The state shown for the pair, or NO_CELL."""
    snapshot = model.snapshot()
    b = [e["name"] for e in snapshot["bundles"]].index(bundle_name)
    c = [e["name"] for e in snapshot["clusters"]].index(cluster_name)
    code: str = snapshot["cells"][c][b]
    return code if code == NO_CELL else str(snapshot["states"][int(code)])


def fleet(*deployments: dict[str, Any], prod: dict[str, Any] | None = None) -> FleetModel:
    """Bundle `app` targeting env=prod; clusters `p1` (prod) and `d1` (dev)."""
    model = FleetModel()
    put(model, BUNDLE, bundle(PROD).to_wire())
    put(model, CLUSTER, prod or cluster("p1", {"env": "prod"}).to_wire())
    put(model, CLUSTER, cluster("d1", {"env": "dev"}).to_wire())
    for obj in deployments:
        put(model, BUNDLE_DEPLOYMENT, obj)
    return model


@pytest.mark.parametrize(
    ("deployments", "prod", "expected"),
    [
        ((), None, "Pending"),
        ((bd("app", "p1"),), None, "Ready"),
        ((bd("app", "p1", applied="v1"),), None, "WaitApplied"),
        ((bd("app", "p1", applied="v1", conditions=[APPLY_FAILED]),), None, "ErrApplied"),
        ((bd("app", "p1", ready=False, conditions=[UPGRADE_FAILED]),), None, "NotReady"),
        ((bd("app", "p1", staged="v3"),), None, "OutOfSync"),
        ((bd("app", "p1", non_modified=False),), None, "Modified"),
        ((bd("app", "p1"),), offline("p1", {"env": "prod"}), "Offline"),
    ],
    ids=[
        "targeted-without-deployment-is-pending",
        "ready",
        "not-applied-yet",
        "apply-failed",
        "release-not-ready",
        "newer-deployment-staged",
        "modified-on-the-cluster",
        "agent-offline",
    ],
)
def test_a_targeted_cell_shows_the_placement_state(
    deployments: tuple[dict[str, Any], ...], prod: dict[str, Any] | None, expected: str
) -> None:
    model = fleet(*deployments, prod=prod)
    assert cell(model, "app", "p1") == expected
    assert cell(model, "app", "d1") == NO_CELL


def test_a_label_change_retargets_the_cluster_and_tells_the_new_cell() -> None:
    model = fleet(bd("app", "p1"))
    model.take_changes()
    put(model, CLUSTER, cluster("d1", {"env": "prod"}).to_wire())
    changes = model.take_changes()
    assert changes is not None and not changes["reset"]
    assert changes["cells"] == [[f"{WS}/app", f"{WS}/d1", STATES.index("Pending")]]
    put(model, BUNDLE_DEPLOYMENT, bd("app", "d1", applied="v1"))
    assert model.take_changes()["cells"] == [  # type: ignore[index]
        [f"{WS}/app", f"{WS}/d1", STATES.index("WaitApplied")]
    ]


def test_a_deployment_outlives_its_targeting_until_it_is_deleted() -> None:
    model = fleet(bd("app", "p1"))
    put(model, CLUSTER, cluster("p1", {"env": "dev"}).to_wire())
    assert cell(model, "app", "p1") == "Ready"
    model.apply(BUNDLE_DEPLOYMENT, EventType.DELETED, bd("app", "p1"))
    assert cell(model, "app", "p1") == NO_CELL


def test_a_cluster_group_change_retargets_its_workspace() -> None:
    model = FleetModel()
    put(model, BUNDLE, bundle([{"clusterGroup": "eu"}]).to_wire())
    put(model, CLUSTER, cluster("c1", {"region": "eu"}).to_wire())
    assert cell(model, "app", "c1") == NO_CELL
    put(model, CLUSTER_GROUP, group("eu", {"matchLabels": {"region": "eu"}}).to_wire())
    assert cell(model, "app", "c1") == "Pending"
    model.apply(CLUSTER_GROUP, EventType.DELETED, group("eu", {"matchLabels": {}}).to_wire())
    assert cell(model, "app", "c1") == NO_CELL


def test_a_paused_bundle_says_so_in_the_message_of_a_held_cell() -> None:
    model = FleetModel()
    put(model, BUNDLE, bundle(PROD, paused=True).to_wire())
    put(model, CLUSTER, cluster("p1", {"env": "prod"}).to_wire())
    placement = model.placements_of_bundle(f"{WS}/app")[f"{WS}/p1"]
    assert placement.state.value == "Pending"
    assert "the Bundle is paused" in placement.message


def test_adding_or_removing_a_bundle_or_cluster_is_a_reset() -> None:
    model = fleet()
    assert model.take_changes()["reset"] is True  # type: ignore[index]
    assert model.take_changes() is None
    model.apply(CLUSTER, EventType.DELETED, cluster("d1").to_wire())
    assert model.take_changes()["reset"] is True  # type: ignore[index]
    assert [c["name"] for c in model.snapshot()["clusters"]] == ["p1"]


def test_a_status_change_tells_the_entry_without_touching_cells() -> None:
    model = fleet(bd("app", "p1"))
    model.take_changes()
    obj = bundle(PROD).to_wire()
    obj["status"] = {"display": {"readyClusters": "1/1", "state": "Ready"}}
    put(model, BUNDLE, obj)
    changes = model.take_changes()
    assert changes is not None
    assert changes["cells"] == []
    assert changes["bundles"] == [
        {
            "key": f"{WS}/app",
            "namespace": WS,
            "name": "app",
            "state": "Ready",
            "ready": "1/1",
            "version": "",
            "paused": False,
        }
    ]


def test_an_object_its_model_refuses_is_left_out() -> None:
    model = FleetModel()
    put(model, BUNDLE, {"metadata": {"name": "bad", "namespace": WS}, "spec": {"targets": 3}})
    assert model.snapshot()["bundles"] == []
