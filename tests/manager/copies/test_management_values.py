"""`valuesFrom` entries with `source: Management`: the manager reads the object in the Bundle's
workspace (only one meant for delivery), records its digest in the options (a change is a new
deploymentID, under the rollout strategy), copies it into every targeted cluster namespace under a
name of its own, and deletes the copies no deployment names; a missing or refused object holds the
Bundle and says which, where and why."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CONFIG_MAP, SECRET
from bundler.core.flux.values_copies import COPY_MAX_BYTES
from bundler.core.naming import cluster_namespace
from bundler.manager.app import Manager
from bundler.manager.copies.management_values import MANAGEMENT_VALUES
from bundler.manager.copies.secret_copies import ANNOTATION_COPIED_FROM, LABEL_SECRET_COPY
from bundler.runtime.clock import ManualClock
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.world import (
    CountingStore,
    StartManager,
    create_world,
    deployment_of,
    deployments,
    ready_condition,
    settle,
    status_of,
    world,
)
from tests.support.values_objects import (
    DELIVER,
    DELIVERY_RULE_CASES,
    encoded,
    management,
    values_config_map,
    values_secret,
)

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
FROM_SECRET = {"valuesFrom": [management("Secret", "db-values")]}
COPIES = {LABEL_SECRET_COPY: MANAGEMENT_VALUES}


def copies(store: MemoryStore, cluster_name: str | None = None) -> dict[tuple[str, str], Obj]:
    """The management values copies, by namespace and name, of one cluster namespace (None: of
    all)."""
    namespace = None if cluster_name is None else cluster_namespace(WS, cluster_name)
    found = store.list(SECRET, namespace=namespace, labels=COPIES).items
    return {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in found}


def copy_names(store: MemoryStore, cluster_name: str) -> set[str]:
    return {name for _, name in copies(store, cluster_name)}


def delivered(store: MemoryStore, cluster_name: str) -> list[dict[str, Any]]:
    options = deployment_of(store, cluster_name)["spec"]["options"]
    found: list[dict[str, Any]] = options.get("managementValues") or []
    return found


def delivering(store: MemoryStore, start_manager: StartManager) -> Manager:
    """Clusters a and b, the Secret db-values, a Bundle reading it; the manager settled."""
    store.create(SECRET, values_secret("db-values"))
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=FROM_SECRET)))
    manager = start_manager(store)
    settle(manager)
    return manager


def test_the_object_is_copied_into_each_cluster_namespace_and_named_in_the_options(
    store: MemoryStore, start_manager: StartManager
) -> None:
    source = values_secret("db-values", {"values.yaml": "db: {password: s3cret}\n"})
    store.create(SECRET, source)
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=FROM_SECRET)))
    settle(start_manager(store))
    for name in ("a", "b"):
        (entry,) = delivered(store, name)
        assert (entry["kind"], entry["name"]) == ("Secret", "db-values")
        assert entry["digest"].startswith("sha256:")
        assert entry["secretName"] == f"app-mgmt-secret-db-values-{entry['digest'][7:17]}"
        (copy,) = copies(store, name).values()
        assert copy["metadata"]["name"] == entry["secretName"]
        assert (copy["type"], copy["data"]) == ("Opaque", source["data"])
        annotations = copy["metadata"]["annotations"]
        assert annotations[ANNOTATION_COPIED_FROM] == f"Secret {WS}/db-values"
        bd = deployment_of(store, name)
        owners = [(o["kind"], o["uid"]) for o in copy["metadata"]["ownerReferences"]]
        assert owners == [("BundleDeployment", bd["metadata"]["uid"])]
        assert bd["spec"]["options"]["helm"]["valuesFrom"] == FROM_SECRET["valuesFrom"]


def test_a_change_of_the_data_is_a_new_deployment_and_the_old_copy_goes(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, values_secret("db-values", {"values.yaml": "v: 1\n"}))
    create_world(store, world(cluster("a"), bundle(ALL, helm=FROM_SECRET)))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    before = deployment_of(store, "a")["spec"]
    counting.reset()
    manager.resync()
    settle(manager)
    assert counting.total() == 0
    # Metadata the copy does not carry changes nothing.
    store.patch(SECRET, "db-values", {"metadata": {"annotations": {"note": "x"}}}, WS)
    settle(manager)
    assert counting.total() == 0
    store.patch(SECRET, "db-values", {"data": {"values.yaml": encoded("v: 2\n")}}, WS)
    settle(manager)  # no resync: the change itself wakes the bundle
    after = deployment_of(store, "a")["spec"]
    assert after["deploymentID"] != before["deploymentID"]
    (entry,) = after["options"]["managementValues"]
    assert entry["digest"] != before["options"]["managementValues"][0]["digest"]
    assert copy_names(store, "a") == {entry["secretName"]}
    (copy,) = copies(store, "a").values()
    assert copy["data"] == {"values.yaml": encoded("v: 2\n")}


def test_a_staged_deployment_keeps_both_copies_until_it_is_promoted(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, values_secret("db-values", {"values.yaml": "v: 1\n"}))
    create_world(store, world(cluster("a"), bundle(ALL, helm=FROM_SECRET)))
    manager = start_manager(store)
    settle(manager)
    old = delivered(store, "a")[0]["secretName"]
    store.patch(BUNDLE, "app", {"spec": {"paused": True}}, WS)
    store.patch(SECRET, "db-values", {"data": {"values.yaml": encoded("v: 2\n")}}, WS)
    settle(manager)
    bd = deployment_of(store, "a")
    new = bd["spec"]["stagedOptions"]["managementValues"][0]["secretName"]
    assert bd["spec"]["options"]["managementValues"][0]["secretName"] == old != new
    assert copy_names(store, "a") == {old, new}
    uid = bd["metadata"]["uid"]
    for copy in copies(store, "a").values():
        assert [o["uid"] for o in copy["metadata"]["ownerReferences"]] == [uid]
    store.patch(BUNDLE, "app", {"spec": {"paused": False}}, WS)
    settle(manager)
    assert copy_names(store, "a") == {new}


def test_copies_go_when_no_deployment_names_them(
    store: MemoryStore, start_manager: StartManager
) -> None:
    manager = delivering(store, start_manager)
    assert copies(store)
    store.patch(BUNDLE, "app", {"spec": {"helm": {"valuesFrom": None}}}, WS)
    settle(manager)
    assert copies(store) == {}
    assert "managementValues" not in deployment_of(store, "a")["spec"]["options"]
    # Named again, then the bundle goes: the copies go with the deployments that own them.
    store.patch(BUNDLE, "app", {"spec": {"helm": FROM_SECRET}}, WS)
    settle(manager)
    assert len(copies(store)) == 2
    store.delete(BUNDLE, "app", WS)
    settle(manager)
    assert copies(store) == {}


def test_a_targets_entry_reaches_its_clusters_only_and_follows_flux_order(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, values_secret("db-values"))
    store.create(CONFIG_MAP, values_config_map("eu-values"))
    targets: list[dict[str, Any]] = [
        {
            "clusterSelector": {"matchLabels": {"region": "eu"}},
            "helm": {"valuesFrom": [management("ConfigMap", "eu-values")]},
        },
        {"clusterSelector": {}},
    ]
    app = bundle(targets, helm=FROM_SECRET)
    create_world(store, world(cluster("eu", {"region": "eu"}), cluster("us"), app))
    settle(start_manager(store))
    assert [(d["kind"], d["name"]) for d in delivered(store, "eu")] == [
        ("Secret", "db-values"),
        ("ConfigMap", "eu-values"),
    ]
    assert [(d["kind"], d["name"]) for d in delivered(store, "us")] == [("Secret", "db-values")]
    eu = copies(store, "eu")
    configmap_copy = next(c for (_, n), c in eu.items() if "-configmap-eu-values-" in n)
    assert configmap_copy["data"] == {"values.yaml": encoded("greeting: from-management\n")}
    assert len(copies(store, "us")) == 1


def test_a_missing_object_holds_the_bundle_and_says_which_and_where(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), bundle(ALL, helm=FROM_SECRET)))
    manager = start_manager(store)
    settle(manager)
    assert deployments(store) == {}
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "ValuesNotFound")
    assert ready["message"].startswith(
        f"Bundle {WS}/app: spec.helm.valuesFrom[0]: Secret {WS}/db-values does not exist"
    )
    assert status_of(store, BUNDLE, "app")["display"]["state"] == "ValuesNotFound"
    store.create(SECRET, values_secret("db-values"))  # its creation wakes the bundle
    settle(manager)
    assert set(deployments(store)) == {("a", "app")}
    assert len(copies(store, "a")) == 1


def test_an_optional_object_that_does_not_exist_is_left_out(
    store: MemoryStore, start_manager: StartManager
) -> None:
    helm = {"valuesFrom": [management("ConfigMap", "maybe", optional=True)]}
    create_world(store, world(cluster("a"), bundle(ALL, helm=helm)))
    manager = start_manager(store)
    settle(manager)
    options = deployment_of(store, "a")["spec"]["options"]
    assert "managementValues" not in options
    assert copies(store) == {}
    store.create(CONFIG_MAP, values_config_map("maybe"))  # it appears: delivered from then on
    settle(manager)
    assert [d["name"] for d in delivered(store, "a")] == ["maybe"]


@pytest.mark.parametrize(
    ("obj", "is_a_kubeconfig", "refusal"),
    [c[1:] for c in DELIVERY_RULE_CASES],
    ids=[c[0] for c in DELIVERY_RULE_CASES],
)
def test_only_objects_meant_for_delivery_are_copied(
    store: MemoryStore,
    start_manager: StartManager,
    obj: Obj,
    is_a_kubeconfig: bool,
    refusal: str | None,
) -> None:
    res = SECRET if obj["kind"] == "Secret" else CONFIG_MAP
    store.create(res, obj)
    victim = cluster("victim", kubeConfigSecret="vals" if is_a_kubeconfig else None)
    helm = {"valuesFrom": [{"kind": "Secret", "name": "d"}, management(obj["kind"], "vals")]}
    create_world(store, world(cluster("a"), victim, bundle(ALL, helm=helm)))
    settle(start_manager(store))
    ready = ready_condition(store)
    if refusal is None:
        assert ready["reason"] != "ValuesRefused"
        assert len(copies(store, "a")) == 1
        return
    assert (ready["status"], ready["reason"]) == ("False", "ValuesRefused")
    assert ready["message"].startswith(
        f"Bundle {WS}/app: spec.helm.valuesFrom[1]: {obj['kind']} {WS}/vals is not delivered to "
        f"clusters: {refusal.format(ws=WS)}"
    )
    assert "labelled bundler.dev/deliver=true are delivered to clusters" in ready["message"]
    assert deployments(store) == {}
    assert copies(store) == {}
    values = list(obj["data"].values())
    if obj["kind"] == "Secret":
        values += [base64.b64decode(v).decode() for v in values]
    assert values
    for value in values:
        assert value not in ready["message"]


def test_an_object_larger_than_a_copy_is_refused(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(CONFIG_MAP, values_config_map("big", {"values.yaml": "x" * COPY_MAX_BYTES}))
    helm = {"valuesFrom": [management("ConfigMap", "big")]}
    create_world(store, world(cluster("a"), bundle(ALL, helm=helm)))
    settle(start_manager(store))
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "ValuesRefused")
    assert f"ConfigMap {WS}/big is not delivered to clusters: it holds" in ready["message"]
    assert f"more than the {COPY_MAX_BYTES} copied" in ready["message"]


def test_withdrawn_delivery_deletes_every_copy(
    store: MemoryStore, start_manager: StartManager
) -> None:
    manager = delivering(store, start_manager)
    kept = {name: bd["spec"] for name, bd in deployments(store).items()}
    assert len(copies(store)) == 2
    store.patch(SECRET, "db-values", {"metadata": {"labels": {"bundler.dev/deliver": None}}}, WS)
    settle(manager)
    assert ready_condition(store)["reason"] == "ValuesRefused"
    assert copies(store) == {}
    # The clusters keep what they run (their deployments stay as they are).
    assert {name: bd["spec"] for name, bd in deployments(store).items()} == kept


def test_an_unlabelled_config_map_is_refused_not_missing(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(CONFIG_MAP, values_config_map("settings"))
    helm = {"valuesFrom": [management("ConfigMap", "settings")]}
    create_world(store, world(cluster("a"), bundle(ALL, helm=helm)))
    manager = start_manager(store)
    settle(manager)
    assert len(copies(store, "a")) == 1
    store.patch(CONFIG_MAP, "settings", {"metadata": {"labels": {"bundler.dev/deliver": None}}}, WS)
    settle(manager)
    ready = ready_condition(store)
    assert ready["reason"] == "ValuesRefused"
    assert "it is not labelled bundler.dev/deliver=true" in ready["message"]
    assert copies(store) == {}
    store.patch(CONFIG_MAP, "settings", {"metadata": {"labels": DELIVER}}, WS)
    settle(manager)
    assert ready_condition(store)["reason"] != "ValuesRefused"
    assert len(copies(store, "a")) == 1


def test_a_secret_bundler_did_not_copy_is_left_alone_and_named_on_the_bundle(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    manager = delivering(store, start_manager)
    name = delivered(store, "a")[0]["secretName"]
    store.delete(BUNDLE, "app", WS)
    settle(manager)
    blocked_in = cluster_namespace(WS, "a")
    foreign = values_secret(name, {"mine": "yes"}, labels={})
    foreign["metadata"]["namespace"] = blocked_in
    store.create(SECRET, foreign)
    create_world(store, world(bundle(ALL, helm=FROM_SECRET)))
    settle(manager)
    kept = store.get(SECRET, name, blocked_in)
    assert kept["data"] == foreign["data"]
    assert set(deployments(store)) == {("b", "app")}
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "ValuesCopyBlocked")
    assert (
        f"cluster {WS}/a: Secret {blocked_in}/{name} in the cluster namespace" in (ready["message"])
    )
    store.delete(SECRET, name, blocked_in)
    clock.advance(600.0)  # past the retry's backoff
    settle(manager)
    assert set(deployments(store)) == {("a", "app"), ("b", "app")}
    with pytest.raises(NotFound):
        store.get(SECRET, "db-values", blocked_in)  # nothing else was written there
