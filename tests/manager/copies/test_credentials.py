"""A Bundle's `helm.secretRef`: the manager copies the Secret into every targeted cluster namespace
(owned by the BundleDeployments there), keeps the copies current as the source changes, refuses to
deploy without it, says which Secret blocks a copy, and the agents deliver it to the Flux sources
(pull mode downstream, remote mode in place)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pytest

from bundler.api.images import BundleImage, ResolvedImage
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, HELM_REPOSITORY, NAMESPACE, SECRET
from bundler.core.naming import cluster_namespace
from bundler.manager.copies.secret_copies import ANNOTATION_COPIED_FROM, LABEL_SECRET_COPY
from bundler.runtime.clock import ManualClock
from bundler.sim.fleet import FleetOptions
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.builders import WS, bundle, cluster, kustomize_bundle
from tests.support.manager.registry_charts import (
    CREDENTIALS_RULE_CASES,
    basic_auth_secret,
    dockerconfig_secret,
    typed_secret,
)
from tests.support.manager.sim_driver import run_until, running_fleet
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

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]
CREDS = "registry-creds"
WITH_CREDS = {"secretRef": {"name": CREDS}}
WITH_CREDS_NAMED = {"secretRef": {"name": "creds"}}


def copy_in(store: MemoryStore, cluster_name: str, name: str = CREDS) -> Obj | None:
    try:
        return store.get(SECRET, name, cluster_namespace(WS, cluster_name))
    except NotFound:
        return None


def deployments_and_copies(store: MemoryStore) -> set[tuple[str, str, str]]:
    """Every BundleDeployment and credentials copy, with its resourceVersion."""
    copies = store.list(SECRET, labels={LABEL_SECRET_COPY: "repository-credentials"}).items
    return {
        (o["kind"], o["metadata"]["namespace"], o["metadata"]["resourceVersion"])
        for o in [*store.list(BUNDLE_DEPLOYMENT).items, *copies]
    }


def test_the_secret_is_copied_into_each_cluster_namespace(
    store: MemoryStore, start_manager: StartManager
) -> None:
    source = dockerconfig_secret(CREDS, "registry.example.com", "u", "p")
    store.create(SECRET, source)
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=WITH_CREDS)))
    settle(start_manager(store))
    for name in ("a", "b"):
        copy = copy_in(store, name)
        assert copy is not None
        assert (copy["type"], copy["data"]) == (source["type"], source["data"])
        assert copy["metadata"]["labels"][LABEL_SECRET_COPY] == "repository-credentials"
        assert copy["metadata"]["annotations"][ANNOTATION_COPIED_FROM] == f"{WS}/{CREDS}"
        bd = deployment_of(store, name)
        owners = [(o["kind"], o["uid"]) for o in copy["metadata"]["ownerReferences"]]
        assert owners == [("BundleDeployment", bd["metadata"]["uid"])]
        assert bd["spec"]["options"]["helm"]["secretRef"] == {"name": CREDS}


def test_copies_follow_the_source_and_cost_nothing_while_it_stays(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, basic_auth_secret(CREDS, "u", "old"))
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=WITH_CREDS)))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    counting.reset()
    manager.resync()
    settle(manager)
    assert counting.total() == 0
    new = base64.b64encode(b"rotated").decode()
    store.patch(SECRET, CREDS, {"data": {"password": new}}, WS)
    settle(manager)  # no resync: the change itself wakes the bundle
    assert counting.writes == {("update", "secrets"): 2}
    for name in ("a", "b"):
        copy = copy_in(store, name)
        assert copy is not None and copy["data"]["password"] == new


def test_a_missing_secret_holds_the_bundle_and_says_which(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), bundle(ALL, helm=WITH_CREDS)))
    manager = start_manager(store)
    settle(manager)
    assert deployments(store) == {}
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "CredentialsNotFound")
    assert (
        f"Secret {WS}/{CREDS} with the repository credentials does not exist" in (ready["message"])
    )
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))  # its creation wakes the bundle
    settle(manager)
    assert copy_in(store, "a") is not None
    assert set(deployments(store)) == {("a", "app")}


def test_a_deleted_secret_holds_the_bundle_until_it_is_back(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=WITH_CREDS)))
    manager = start_manager(store)
    settle(manager)
    assert ready_condition(store)["reason"] != "CredentialsNotFound"
    kept = deployments_and_copies(store)
    assert len(kept) == 4
    store.delete(SECRET, CREDS, WS)
    settle(manager)
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "CredentialsNotFound")
    assert f"Secret {WS}/{CREDS} with the repository credentials does not exist" in ready["message"]
    assert deployments_and_copies(store) == kept  # untouched
    # Recreated (with a new password): the bundle recovers and the copies follow, no resync.
    store.create(SECRET, basic_auth_secret(CREDS, "u", "new"))
    settle(manager)
    assert ready_condition(store)["reason"] != "CredentialsNotFound"
    for name in ("a", "b"):
        copy = copy_in(store, name)
        assert copy is not None
        assert copy["data"]["password"] == base64.b64encode(b"new").decode()


def test_a_range_waits_for_its_credentials_before_asking_the_registry(
    store: MemoryStore, start_manager: StartManager
) -> None:
    asked: list[Mapping[str, str] | None] = []

    def resolver(repo: str, chart: str, constraint: str, secret: Mapping[str, str] | None) -> str:
        asked.append(secret)
        return "1.2.3"

    ranged = bundle(ALL, helm={**WITH_CREDS, "version": "1.*"})
    create_world(store, world(cluster("a"), ranged))
    manager = start_manager(store, resolver=resolver)
    settle(manager)
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "CredentialsNotFound")
    assert asked == []
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    settle(manager)
    assert asked == [{"username": "u", "password": "p"}]
    assert deployment_of(store, "a")["spec"]["options"]["helm"]["version"] == "1.2.3"


def test_copies_go_when_no_deployment_needs_them(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=WITH_CREDS)))
    manager = start_manager(store)
    settle(manager)
    # The bundle stops naming the Secret: its rewritten deployments give the copies up.
    store.patch(BUNDLE, "app", {"spec": {"helm": {"secretRef": None}}}, WS)
    settle(manager)
    assert (copy_in(store, "a"), copy_in(store, "b")) == (None, None)
    # Named again, then the bundle goes: the garbage collector takes the copies with the
    # deployments that own them.
    store.patch(BUNDLE, "app", {"spec": {"helm": WITH_CREDS}}, WS)
    settle(manager)
    assert copy_in(store, "a") is not None
    store.delete(BUNDLE, "app", WS)
    settle(manager)
    assert store.list(BUNDLE_DEPLOYMENT).items == []
    assert (copy_in(store, "a"), copy_in(store, "b")) == (None, None)


def test_a_secret_bundler_did_not_copy_is_left_alone_and_named_on_the_bundle(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    create_world(store, world(cluster("a"), cluster("b")))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    blocked_in = cluster_namespace(WS, "a")
    foreign = basic_auth_secret(CREDS, "someone", "else")
    foreign["metadata"]["namespace"] = blocked_in
    store.create(SECRET, foreign)
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    create_world(store, world(bundle(ALL, helm=WITH_CREDS)))
    settle(manager)
    kept = copy_in(store, "a")
    assert kept is not None and kept["data"] == foreign["data"]
    assert LABEL_SECRET_COPY not in (kept["metadata"].get("labels") or {})
    # Cluster a keeps what it runs (nothing); cluster b proceeds.
    assert set(deployments(store)) == {("b", "app")}
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "CredentialsCopyBlocked")
    where = f"cluster {WS}/a: Secret {blocked_in}/{CREDS} in the cluster namespace"
    assert where in ready["message"]
    non_ready = {r["cluster"]: r for r in status_of(store, BUNDLE, "app")["nonReady"]}
    assert non_ready[f"{WS}/a"]["state"] == "ErrApplied"
    assert f"Secret {blocked_in}/{CREDS}" in non_ready[f"{WS}/a"]["message"]
    # Looking again while it is in the way costs a read, no write.
    counting.reset()
    manager.resync()
    settle(manager)
    assert counting.total() == 0
    # Once it is gone, the retry copies the credentials and deploys.
    store.delete(SECRET, CREDS, blocked_in)
    clock.advance(600.0)  # past the retry's backoff
    settle(manager)
    copy = copy_in(store, "a")
    assert copy is not None and copy["metadata"]["labels"][LABEL_SECRET_COPY]
    assert set(deployments(store)) == {("a", "app"), ("b", "app")}
    assert ready_condition(store)["reason"] != "CredentialsCopyBlocked"


def test_agents_hand_the_credentials_to_the_flux_sources(clock: ManualClock) -> None:
    edge = cluster("edge", agentMode="remote", kubeConfigSecret="edge-kubeconfig")
    inputs = world(cluster("pulled"), edge, bundle(ALL, helm=WITH_CREDS))
    with running_fleet(inputs, FleetOptions(flux_delay=1.0), clock) as fleet:
        source = basic_auth_secret(CREDS, "u", "p")
        fleet.store.create(NAMESPACE, {"metadata": {"name": WS}})
        fleet.store.create(SECRET, source)
        fleet.start()

        def ready() -> bool:
            display = (fleet.store.get(BUNDLE, "app", WS).get("status") or {}).get("display")
            return (display or {}).get("readyClusters") == "2/2"

        run_until(fleet, clock, ready, "the bundle to read 2/2")
        pulled = next(sim for sim in fleet.clusters if sim.cluster.metadata.name == "pulled")
        assert pulled.store is not None
        downstream = pulled.store.get(SECRET, "app-credentials", "bundler-system")
        assert (downstream["type"], downstream["data"]) == (source["type"], source["data"])
        repository = pulled.store.get(HELM_REPOSITORY, "app", "bundler-system")
        assert repository["spec"]["secretRef"] == {"name": "app-credentials"}
        # Remote mode: the source on the management cluster reads the copy where it is.
        edge_namespace = cluster_namespace(WS, "edge")
        remote = fleet.store.get(HELM_REPOSITORY, "app", edge_namespace)
        assert remote["spec"]["secretRef"] == {"name": CREDS}
        assert fleet.store.get(SECRET, CREDS, edge_namespace)["data"] == source["data"]


def test_a_staged_deployment_keeps_both_secrets_until_it_is_promoted(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    store.create(SECRET, basic_auth_secret("new-creds", "u2", "p2"))
    create_world(store, world(cluster("a"), bundle(ALL, helm=WITH_CREDS)))
    manager = start_manager(store)
    settle(manager)
    # Paused, the new options are only staged: the agent still deploys with the old Secret.
    change = {"paused": True, "helm": {"secretRef": {"name": "new-creds"}, "version": "1.0.1"}}
    store.patch(BUNDLE, "app", {"spec": change}, WS)
    settle(manager)
    bd = deployment_of(store, "a")
    assert bd["spec"]["stagedOptions"]["helm"]["secretRef"] == {"name": "new-creds"}
    uid = bd["metadata"]["uid"]
    for name in (CREDS, "new-creds"):
        copy = copy_in(store, "a", name)
        assert copy is not None and [o["uid"] for o in copy["metadata"]["ownerReferences"]] == [uid]
    store.patch(BUNDLE, "app", {"spec": {"paused": False}}, WS)
    settle(manager)
    assert copy_in(store, "a", CREDS) is None
    assert copy_in(store, "a", "new-creds") is not None


@pytest.mark.parametrize(
    ("secret", "is_a_kubeconfig", "refusal"),
    [c[1:] for c in CREDENTIALS_RULE_CASES],
    ids=[c[0] for c in CREDENTIALS_RULE_CASES],
)
def test_only_registry_credentials_are_used_and_copied(
    store: MemoryStore,
    start_manager: StartManager,
    secret: Obj,
    is_a_kubeconfig: bool,
    refusal: str | None,
) -> None:
    store.create(SECRET, secret)
    victim = cluster("victim", kubeConfigSecret="creds" if is_a_kubeconfig else None)
    create_world(store, world(cluster("a"), victim, bundle(ALL, helm=WITH_CREDS_NAMED)))
    settle(start_manager(store))
    ready = ready_condition(store)
    if refusal is None:
        assert ready["reason"] != "CredentialsRefused"
        assert copy_in(store, "a", "creds") is not None
        return
    assert (ready["status"], ready["reason"]) == ("False", "CredentialsRefused")
    assert ready["message"].startswith(
        f"Bundle {WS}/app: spec.helm.secretRef: Secret {WS}/creds is not used as registry "
        "credentials: "
    )
    assert refusal.format(ws=WS) in ready["message"]
    assert "only Secrets of type kubernetes.io/dockerconfigjson or" in ready["message"]
    assert deployments(store) == {}
    assert store.list(SECRET, labels={LABEL_SECRET_COPY: "repository-credentials"}).items == []
    for value in secret["data"].values():
        assert value not in ready["message"]
        assert base64.b64decode(value).decode() not in ready["message"]


def test_a_refused_image_secret_is_never_read_nor_sent(
    store: MemoryStore, start_manager: StartManager
) -> None:
    asked: list[Mapping[str, str] | None] = []

    def resolver(image: BundleImage, secret: Mapping[str, str] | None) -> ResolvedImage:
        asked.append(secret)
        return ResolvedImage(name="web", repository=image.repository, tag="1.0.0", digest="x")

    store.create(SECRET, typed_secret("pull", "cluster.x-k8s.io/secret", {"value": "KUBECONFIG"}))
    image = {
        "name": "web",
        "repository": "registry.example.com/web",
        "policy": {"semver": {"range": "^1"}},
        "secretRef": {"name": "pull"},
    }
    values = {"tag": "${ images.web.tag }"}
    create_world(store, world(cluster("a"), bundle(ALL, helm={"values": values}, images=[image])))
    settle(start_manager(store, image_resolver=resolver))
    conditions = status_of(store, BUNDLE, "app")["conditions"]
    images = next(c for c in conditions if c["type"] == "ImagesResolved")
    assert (images["status"], images["reason"]) == ("False", "CredentialsRefused")
    assert (
        f"Secret {WS}/pull is not used as registry credentials: it is a Cluster API"
        in (images["message"])
    )
    assert asked == []


def test_copies_of_a_secret_that_is_no_longer_credentials_are_deleted(
    store: MemoryStore, start_manager: StartManager
) -> None:
    store.create(SECRET, basic_auth_secret(CREDS, "u", "p"))
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=WITH_CREDS)))
    manager = start_manager(store)
    settle(manager)
    assert copy_in(store, "a") is not None and copy_in(store, "b") is not None
    # The same name now holds a cluster's kubeconfig (the type of a Secret cannot change).
    store.delete(SECRET, CREDS, WS)
    kubeconfig = typed_secret(CREDS, "cluster.x-k8s.io/secret", {"value": "KUBECONFIG"})
    store.create(SECRET, kubeconfig)
    settle(manager)
    assert ready_condition(store)["reason"] == "CredentialsRefused"
    assert (copy_in(store, "a"), copy_in(store, "b")) == (None, None)
    assert set(deployments(store)) == {("a", "app"), ("b", "app")}  # they keep what they run


@pytest.mark.parametrize("kind", ["oci", "git"])
def test_a_kustomize_sources_secret_is_copied_and_a_change_to_it_wakes_the_bundle(
    store: MemoryStore, start_manager: StartManager, kind: str
) -> None:
    store.create(SECRET, basic_auth_secret(CREDS, "u", "old"))
    if kind == "oci":
        found = {"url": "oci://registry.example/manifests/app", "tag": "1.0.0"}
    else:
        found = {"url": "https://git.example/a.git"}
    source = {kind: {**found, "secretRef": {"name": CREDS}}}
    create_world(store, world(cluster("a"), kustomize_bundle(ALL, kustomize={"source": source})))
    manager = start_manager(store)
    settle(manager)
    copy = copy_in(store, "a")
    assert copy is not None
    assert deployment_of(store, "a")["spec"]["options"]["kustomize"]["source"] == source
    new = base64.b64encode(b"rotated").decode()
    store.patch(SECRET, CREDS, {"data": {"password": new}}, WS)
    settle(manager)
    copy = copy_in(store, "a")
    assert copy is not None
    assert copy["data"]["password"] == new


def test_a_kustomize_bundle_naming_a_missing_secret_says_where(
    store: MemoryStore, start_manager: StartManager
) -> None:
    source = {"git": {"url": "https://git.example/a.git", "secretRef": {"name": "missing"}}}
    create_world(store, world(cluster("a"), kustomize_bundle(ALL, kustomize={"source": source})))
    settle(start_manager(store))
    ready = ready_condition(store)
    assert ready["status"] == "False"
    assert "spec.kustomize.source.git.secretRef" in ready["message"]
