"""The bundle controller on an in-memory store: Bundles in, BundleDeployments out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER
from bundler.commands.render import render_world
from bundler.errors import InvalidInputError, TransientError
from bundler.inputs import load_world
from bundler.manager.controllers.bundle_controller import BUNDLE_FINALIZER
from bundler.runtime.clock import ManualClock
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from tests.support.builders import ARTIFACT, WS, bundle, cluster, kustomize_bundle
from tests.support.manager.world import (
    EXAMPLES,
    CountingStore,
    StartManager,
    create_world,
    deployment_of,
    deployments,
    essentials,
    ready_condition,
    report,
    settle,
    status_of,
    world,
)

REGION_VALUES = {"values": {"region": "${ cluster.labels.region }"}}
ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]


def relabel(store: MemoryStore, name: str, labels: Mapping[str, str | None]) -> None:
    store.patch(CLUSTER, name, {"metadata": {"labels": dict(labels)}}, WS)


def test_examples_give_what_render_gives(store: MemoryStore, start_manager: StartManager) -> None:
    examples = load_world(EXAMPLES)
    create_world(store, examples)
    settle(start_manager(store))
    expected, errors = render_world(examples, with_flux=False)
    assert errors == []
    assert sorted(map(essentials, expected), key=str) == sorted(
        (essentials(bd) for bd in deployments(store).values()), key=str
    )


def test_bundle_gets_the_cleanup_finalizer(store: MemoryStore, start_manager: StartManager) -> None:
    create_world(store, world(bundle(ALL)))
    settle(start_manager(store))
    assert store.get(BUNDLE, "app", WS)["metadata"]["finalizers"] == [BUNDLE_FINALIZER]


def test_label_change_moves_deployments(store: MemoryStore, start_manager: StartManager) -> None:
    prod = [{"clusterSelector": {"matchLabels": {"env": "prod"}}}]
    create_world(
        store,
        world(cluster("a", {"env": "prod"}), cluster("b", {"env": "dev"}), bundle(prod)),
    )
    manager = start_manager(store)
    settle(manager)
    assert set(deployments(store)) == {("a", "app")}
    relabel(store, "a", {"env": "dev"})
    relabel(store, "b", {"env": "prod"})
    settle(manager)
    assert set(deployments(store)) == {("b", "app")}


def test_one_label_change_renders_and_writes_one_row(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster(f"c{i}", {"region": "eu"}) for i in range(5)]
    bundles = [bundle(ALL, name=name, helm=REGION_VALUES) for name in ("one", "two")]
    create_world(store, world(*clusters, *bundles))
    counting = CountingStore(store)
    manager = start_manager(counting)
    settle(manager)
    assert manager.rows_rendered == 10
    counting.reset()
    relabel(store, "c3", {"region": "us"})
    settle(manager)
    assert manager.rows_rendered == 12
    assert counting.writes[("update", "bundledeployments")] == 2
    assert counting.writes[("create", "bundledeployments")] == 0
    values = {k: bd["spec"]["options"]["helm"]["values"] for k, bd in deployments(store).items()}
    assert values[("c3", "one")] == values[("c3", "two")] == {"region": "us"}
    assert values[("c2", "one")] == {"region": "eu"}


def test_unchanged_world_resync_writes_nothing(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    create_world(store, load_world(EXAMPLES))
    counting = CountingStore(store)
    manager = start_manager(counting, resync_period=60.0)
    settle(manager)
    rendered = manager.rows_rendered
    counting.reset()
    manager.resync()
    settle(manager)
    clock.advance(61.0)
    settle(manager)
    assert counting.total() == 0
    assert manager.rows_rendered == rendered


def test_template_error_stays_on_its_cluster(
    store: MemoryStore, start_manager: StartManager
) -> None:
    clusters = [cluster("good", {"region": "eu"}), cluster("bad", {"region": "eu"})]
    create_world(store, world(*clusters, bundle(ALL, helm=REGION_VALUES)))
    manager = start_manager(store)
    settle(manager)
    before = deployment_of(store, "bad")
    store.update(
        CLUSTER,
        {
            **store.get(CLUSTER, "bad", WS),
            "metadata": {**store.get(CLUSTER, "bad", WS)["metadata"], "labels": {}},
        },
    )
    store.patch(
        BUNDLE,
        "app",
        {"spec": {"helm": {"values": {"region": "${ cluster.labels.region }", "v": 2}}}},
        WS,
    )
    settle(manager)
    assert deployment_of(store, "bad") == before
    assert deployment_of(store, "good")["spec"]["options"]["helm"]["values"]["v"] == 2
    status = status_of(store, BUNDLE, "app")
    assert status["display"] == {"readyClusters": "0/2", "state": "ErrApplied", "version": "1.0.0"}
    bad = next(e for e in status["nonReady"] if e["cluster"] == f"{WS}/bad")
    assert bad["state"] == "ErrApplied"
    assert "region" in bad["message"]
    assert "template errors on 1" in ready_condition(store)["message"]


def test_invalid_bundle_keeps_its_deployments(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    report(store, "a")
    settle(manager)
    assert status_of(store, BUNDLE, "app")["display"]["state"] == "Ready"
    before = deployment_of(store, "a")
    store.patch(BUNDLE, "app", {"spec": {"helm": {"releaseName": "Not_A_Name"}}}, WS)
    settle(manager)
    assert deployment_of(store, "a") == before
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert "releaseName" in ready["message"]
    status = status_of(store, BUNDLE, "app")
    assert status["observedGeneration"] == 2
    # kubectl get bundles: the deployment still runs Ready, the Bundle's STATE is its rejection.
    assert status["display"] == {"readyClusters": "1/1", "state": "InvalidSpec", "version": "1.0.0"}


def test_range_without_resolver_is_not_deployed(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), bundle(ALL, helm={"version": "1.*"})))
    settle(start_manager(store))
    assert deployments(store) == {}
    ready = ready_condition(store)
    assert (ready["status"], ready["reason"]) == ("False", "VersionNotResolved")
    assert "'1.*'" in ready["message"] and "resolver" in ready["message"]


class Resolver:
    """Answers ranges with a version the test sets; counts the questions."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.asked: list[tuple[str, str, str, Mapping[str, str] | None]] = []
        self.fail = False
        self.missing = False

    def __call__(
        self, repo: str, chart: str, constraint: str, secret: Mapping[str, str] | None
    ) -> str:
        self.asked.append((repo, chart, constraint, secret))
        if self.fail:
            raise TransientError("registry unreachable", obj=repo)
        if self.missing:
            raise InvalidInputError(f"no version of chart {chart!r} matches", obj=repo)
        return self.version


def test_range_is_resolved_once_for_every_cluster(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    resolver = Resolver("1.2.3")
    helm = {"version": "1.*", "pollInterval": "10m"}
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm=helm)))
    manager = start_manager(store, resolver=resolver)
    settle(manager)
    assert resolver.asked == [("https://charts.example.com", "app", "1.*", None)]
    versions = {k: bd["spec"]["options"]["helm"]["version"] for k, bd in deployments(store).items()}
    assert versions == {("a", "app"): "1.2.3", ("b", "app"): "1.2.3"}
    assert status_of(store, BUNDLE, "app")["resolvedVersion"] == "1.2.3"
    resolver.version = "1.3.0"
    clock.advance(600.0)
    settle(manager)
    assert len(resolver.asked) == 2
    assert deployment_of(store, "a")["spec"]["options"]["helm"]["version"] == "1.3.0"
    assert status_of(store, BUNDLE, "app")["resolvedVersion"] == "1.3.0"


def test_an_artifact_range_is_resolved_once_and_a_new_tag_rolls_out_after_poll_interval(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    resolver = Resolver("1.2.3")
    source = {"oci": {"url": ARTIFACT, "version": "1.*"}}
    kustomize = {"source": source, "pollInterval": "10m"}
    create_world(
        store, world(cluster("a"), cluster("b"), kustomize_bundle(ALL, kustomize=kustomize))
    )
    manager = start_manager(store, resolver=resolver)
    settle(manager)
    assert resolver.asked == [(ARTIFACT, "", "1.*", None)]
    tags = {
        k: bd["spec"]["options"]["kustomize"]["source"]["oci"]
        for k, bd in deployments(store).items()
    }
    assert tags == {
        ("a", "app"): {"url": ARTIFACT, "tag": "1.2.3"},
        ("b", "app"): {"url": ARTIFACT, "tag": "1.2.3"},
    }
    status = status_of(store, BUNDLE, "app")
    assert (status["resolvedVersion"], status["display"].get("version")) == ("1.2.3", "1.2.3")
    resolver.version = "1.3.0"
    clock.advance(600.0)
    settle(manager)
    oci = deployment_of(store, "a")["spec"]["options"]["kustomize"]["source"]["oci"]
    assert oci["tag"] == "1.3.0"


def test_a_bundle_without_version_deploys_the_latest_stable_release_resolved_centrally(
    store: MemoryStore, start_manager: StartManager
) -> None:
    resolver = Resolver("2.4.0")
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL, helm={"version": None})))
    settle(start_manager(store, resolver=resolver))
    assert resolver.asked == [("https://charts.example.com", "app", "*", None)]
    versions = {k: bd["spec"]["options"]["helm"]["version"] for k, bd in deployments(store).items()}
    assert versions == {("a", "app"): "2.4.0", ("b", "app"): "2.4.0"}
    assert status_of(store, BUNDLE, "app")["resolvedVersion"] == "2.4.0"


def test_a_range_nothing_matches_yet_is_asked_again_after_poll_interval(
    store: MemoryStore, start_manager: StartManager, clock: ManualClock
) -> None:
    """pollInterval re-asks also while the Bundle is rejected, so a chart pushed later rolls out
    without waiting for the periodic resync."""
    resolver = Resolver("1.2.3")
    resolver.missing = True
    helm = {"version": "1.*", "pollInterval": "1m"}
    create_world(store, world(cluster("a"), bundle(ALL, helm=helm)))
    manager = start_manager(store, resolver=resolver)
    settle(manager)
    assert (deployments(store), ready_condition(store)["reason"]) == ({}, "VersionNotResolved")
    resolver.missing = False
    clock.advance(60.0)
    settle(manager)
    assert deployment_of(store, "a")["spec"]["options"]["helm"]["version"] == "1.2.3"


def test_unreachable_resolver_leaves_deployments_and_says_why(
    store: MemoryStore, start_manager: StartManager
) -> None:
    resolver = Resolver("1.2.3")
    create_world(store, world(cluster("a"), bundle(ALL, helm={"version": "1.*"})))
    manager = start_manager(store, resolver=resolver)
    settle(manager)
    before = deployment_of(store, "a")
    resolver.fail = True
    store.patch(BUNDLE, "app", {"spec": {"helm": {"version": "1.2.*"}}}, WS)
    settle(manager)
    assert deployment_of(store, "a") == before
    ready = ready_condition(store)
    assert (ready["reason"], "registry unreachable" in ready["message"]) == (
        "VersionNotResolved",
        True,
    )


def test_deleting_a_bundle_removes_its_deployments(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), cluster("b"), bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    assert len(deployments(store)) == 2
    store.delete(BUNDLE, "app", WS)
    settle(manager)
    assert deployments(store) == {}
    with pytest.raises(NotFound):
        store.get(BUNDLE, "app", WS)


def test_a_deployment_the_cache_showed_late_goes_with_its_deleted_bundle(
    store: MemoryStore, start_manager: StartManager
) -> None:
    """The bundle's finalizer is removed once the deletes it saw are sent; a deployment whose
    event only comes after that is a stray, and its event has it removed."""
    create_world(store, world(cluster("a"), bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    store.patch(BUNDLE, "app", {"metadata": {"finalizers": [BUNDLE_FINALIZER, "x/hold"]}}, WS)
    settle(manager)
    index = manager.ctx.scopes.all[0].deployment_models
    of_bundle = index.of_bundle
    index.of_bundle = lambda bundle: {}  # type: ignore[method-assign]
    store.delete(BUNDLE, "app", WS)
    settle(manager)
    index.of_bundle = of_bundle  # type: ignore[method-assign]
    assert store.get(BUNDLE, "app", WS)["metadata"]["finalizers"] == ["x/hold"]
    report(store, "a")
    settle(manager)
    assert deployments(store) == {}


@pytest.mark.parametrize(
    "forged",
    [
        {"deploymentID": "s-forged"},
        {"options": {"helm": {"values": {"forged": True}}}},
    ],
    ids=["deployment-id", "options-with-the-same-id"],
)
def test_deployments_changed_by_hand_are_restored(
    store: MemoryStore, start_manager: StartManager, forged: dict[str, Any]
) -> None:
    create_world(store, world(cluster("a"), bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    wanted = deployment_of(store, "a")
    store.patch(BUNDLE_DEPLOYMENT, "app", {"spec": forged}, wanted["metadata"]["namespace"])
    settle(manager)
    assert deployment_of(store, "a")["spec"] == wanted["spec"]
    store.delete(BUNDLE_DEPLOYMENT, "app", wanted["metadata"]["namespace"])
    settle(manager)
    assert deployment_of(store, "a")["spec"] == wanted["spec"]


def test_rollout_promotes_one_cluster_at_a_time(
    store: MemoryStore, start_manager: StartManager
) -> None:
    names = ["a", "b", "c"]
    strategy: dict[str, Any] = {"maxUnavailable": 1}
    create_world(store, world(*(cluster(n) for n in names), bundle(ALL, rolloutStrategy=strategy)))
    manager = start_manager(store)
    settle(manager)
    for name in names:
        report(store, name)
    settle(manager)
    store.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle(manager)
    staged = {n: "stagedDeploymentID" in deployment_of(store, n)["spec"] for n in names}
    assert sorted(staged.values()) == [False, True, True]
    assert status_of(store, BUNDLE, "app")["summary"]["outOfSync"] == 2
    for _ in names:
        promoted = [n for n in names if not staged[n]]
        for name in promoted:
            report(store, name)
        settle(manager)
        staged = {n: "stagedDeploymentID" in deployment_of(store, n)["spec"] for n in names}
    assert not any(staged.values())
    assert {deployment_of(store, n)["spec"]["options"]["helm"]["values"]["v"] for n in names} == {2}


def test_paused_cluster_only_stages(store: MemoryStore, start_manager: StartManager) -> None:
    create_world(store, world(cluster("a"), bundle(ALL)))
    manager = start_manager(store)
    settle(manager)
    first = deployment_of(store, "a")["spec"]
    store.patch(CLUSTER, "a", {"spec": {"paused": True}}, WS)
    store.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"v": 2}}}}, WS)
    settle(manager)
    spec = deployment_of(store, "a")["spec"]
    assert spec["paused"] is True
    assert (spec["options"], spec["deploymentID"]) == (first["options"], first["deploymentID"])
    assert spec["stagedOptions"]["helm"]["values"] == {"v": 2}
    store.patch(CLUSTER, "a", {"spec": {"paused": False}}, WS)
    settle(manager)
    spec = deployment_of(store, "a")["spec"]
    assert set(spec) == {"options", "deploymentID"}
    assert spec["options"]["helm"]["values"] == {"v": 2}


def labelled(name: str, labels: dict[str, str], **spec: Any) -> Any:
    made = bundle(ALL, name=name, **spec)
    return made.model_copy(update={"metadata": made.metadata.model_copy(update={"labels": labels})})


def test_depends_on_by_selector_follows_the_bundles_it_picks(
    store: MemoryStore, start_manager: StartManager
) -> None:
    selector = {"matchLabels": {"tier": "infra"}}
    create_world(
        store,
        world(
            cluster("a"),
            labelled("certs", {"tier": "infra"}),
            labelled("app", {}, dependsOn=[{"selector": selector, "acceptedStates": ["Ready"]}]),
        ),
    )
    manager = start_manager(store)
    settle(manager)

    def waits_for() -> list[Any]:
        return list(deployment_of(store, "a")["spec"]["options"]["dependsOn"])

    assert waits_for() == [{"name": "certs", "acceptedStates": ["Ready"]}]
    # A Bundle labelled later is waited for from then on; relabelled away, no longer.
    create_world(store, world(labelled("ingress", {"tier": "infra"})))
    settle(manager)
    assert [d["name"] for d in waits_for()] == ["certs", "ingress"]
    store.patch(BUNDLE, "ingress", {"metadata": {"labels": {"tier": "web"}}}, WS)
    settle(manager)
    assert [d["name"] for d in waits_for()] == ["certs"]
    store.patch(BUNDLE, "certs", {"metadata": {"labels": {"tier": "web"}}}, WS)
    settle(manager)
    assert waits_for() == []
    conditions = status_of(store, BUNDLE, "app")["conditions"]
    (references,) = [c for c in conditions if c["type"] == "References"]
    assert "spec.dependsOn[0].selector: no other Bundle" in references["message"]
