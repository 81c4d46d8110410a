"""The Bundle, deployment and Cluster pages' answers: targets and the clusters each picks,
partitions with their budgets, the actions a state offers, explain's verdict, the changes a
deployment holds, the bootstrap phases."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER
from bundler.store.protocol import EventType
from bundler.ui.details import bundle_detail, cluster_detail, deployment_detail
from bundler.ui.fleet_model import FleetModel
from tests.support.builders import WS, bundle, cluster, kustomize_bundle, placed_deployment

TARGETS = [
    {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}},
    {"name": "rest", "clusterSelector": {}},
]


def bd(cluster_name: str, **kwargs: Any) -> dict[str, Any]:
    return placed_deployment("app", cluster_name, **kwargs)


def model_of(bundle_obj: dict[str, Any], *deployments: dict[str, Any]) -> FleetModel:
    model = FleetModel()
    model.apply(BUNDLE, EventType.ADDED, bundle_obj)
    for name, env in (("p1", "prod"), ("p2", "prod"), ("d1", "dev")):
        model.apply(CLUSTER, EventType.ADDED, cluster(name, {"env": env}).to_wire())
    for obj in deployments:
        model.apply(BUNDLE_DEPLOYMENT, EventType.ADDED, obj)
    return model


def test_each_target_lists_the_clusters_it_decides_for() -> None:
    detail = bundle_detail(model_of(bundle(TARGETS).to_wire()), f"{WS}/app")
    assert detail is not None
    picked = {t["label"]: t["clusters"] for t in detail["targets"]}
    assert picked == {"prod": ["p1", "p2"], "rest": ["d1"]}


def test_partitions_count_updated_and_unavailable_clusters_against_their_budget() -> None:
    strategy = {
        "maxUnavailable": 1,
        "partitions": [
            {"name": "canary", "clusterName": "p1"},
            {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}},
        ],
    }
    model = model_of(
        bundle(TARGETS, rolloutStrategy=strategy).to_wire(),
        bd("p1"),
        bd("p2", applied="v1", name="app-p2"),
    )
    detail = bundle_detail(model, f"{WS}/app")
    assert detail is not None
    partitions = detail["rollout"]["partitions"]
    assert [
        (p["name"], p["total"], p["updated"], p["unavailable"], p["pending"]) for p in partitions
    ] == [
        ("canary", 1, 1, 0, 0),
        ("prod", 1, 0, 1, 0),
        ("unmatched", 1, 0, 0, 1),
    ]
    assert [p["maxUnavailable"] for p in partitions] == [1, 1, 1]


@pytest.mark.parametrize(
    ("state", "resume", "allow"),
    [("RolloutHalted", True, False), ("RolledBack", True, False), ("DeletionHeld", False, True),
     ("Ready", False, False)],
    ids=["halted", "rolled-back", "deletion-held", "ready"],
)  # fmt: skip
def test_the_actions_a_state_offers(state: str, resume: bool, allow: bool) -> None:
    obj = bundle(TARGETS).to_wire()
    obj["status"] = {"display": {"state": state, "readyClusters": "0/3"}}
    detail = bundle_detail(model_of(obj), f"{WS}/app")
    assert detail is not None
    assert (detail["actions"]["resumeRollout"], detail["actions"]["allowDeletion"]) == (
        resume,
        allow,
    )


def test_a_deployment_shows_explains_verdict_values_and_its_staged_change() -> None:
    staged = bd("p1", staged="v3")
    staged["spec"]["options"]["helm"]["values"] = {"replicas": 1}
    staged["spec"]["stagedOptions"] = {
        **staged["spec"]["options"],
        "helm": {**staged["spec"]["options"]["helm"], "values": {"replicas": 2}},
    }
    detail = deployment_detail(model_of(bundle(TARGETS).to_wire(), staged), f"{WS}/app", f"{WS}/p1")
    assert detail is not None
    assert detail["verdict"] == "deployed by prod"
    assert detail["targets"] == ["prod: matches", "rest: matches"]
    assert detail["values"] == "replicas: 1\n"
    assert detail["changes"] == {"staged": ["helm.values.replicas: 1 -> 2"]}
    assert detail["state"] == "OutOfSync"


def test_a_cluster_shows_its_bootstrap_phases_in_order() -> None:
    obj = cluster("p1", {"env": "prod"}).to_wire()
    obj["status"] = {
        "conditions": [
            {"type": "AgentConnected", "status": "False", "reason": "Waiting", "message": "..."},
            {"type": "FluxInstalled", "status": "True", "reason": "Installed", "message": "ok"},
        ]
    }
    model = model_of(bundle(TARGETS).to_wire())
    model.apply(CLUSTER, EventType.MODIFIED, obj)
    detail = cluster_detail(model, f"{WS}/p1")
    assert detail is not None
    assert [(p["type"], p.get("status")) for p in detail["bootstrap"]] == [
        ("FluxInstalled", "True"),
        ("AgentConnected", "False"),
        ("Bootstrapped", None),
    ]
    assert [b["bundle"] for b in detail["bundles"]] == [f"{WS}/app"]


def test_a_kustomize_bundle_shows_its_source_and_each_deployment_its_substitutions() -> None:
    source = {"oci": {"url": "oci://registry.example/manifests/app", "tag": "1.2.0"}}
    kustomize = {"source": source, "postBuild": {"substitute": {"region": "eu"}}}
    placed = bd("p1")
    placed["spec"]["options"] = {"kustomize": kustomize, "namespace": "app"}
    model = model_of(kustomize_bundle(TARGETS, kustomize=kustomize).to_wire(), placed)
    detail = bundle_detail(model, f"{WS}/app")
    assert detail is not None
    assert detail["chart"]["repo"] == "oci://registry.example/manifests/app"
    assert detail["chart"]["version"] == "1.2.0"
    shown = deployment_detail(model, f"{WS}/app", f"{WS}/p1")
    assert shown is not None
    assert (shown["version"], shown["values"]) == ("1.2.0", "region: eu\n")
