"""Images resolved centrally by the manager (in memory): templated values, resolvedImages, the
ImagesResolved condition, rollout of a new tag, and holding only the clusters that use an image
that cannot be resolved. The registry is a plain in-memory function; tests/manager/
test_registry_images.py does the same against the real docker-registry."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pytest

from bundler.api.images import BundleImage, ResolvedImage
from bundler.api.resources import BUNDLE, SECRET
from bundler.core.images.wanted import policy_text
from bundler.errors import InvalidInputError, TransientError
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle, cluster
from tests.support.manager.world import (
    StartManager,
    create_world,
    deployment_of,
    deployments,
    report,
    settle,
    status_of,
    world,
)

WEB = "registry.example/team/web"
WEB_IMAGE = {"name": "web", "repository": WEB, "policy": {"semver": {"range": "^1.0"}}}
PRERELEASES = {"name": "web", "policy": {"semver": {"range": ">=2.0.0-0"}}}
USES_WEB = {"image": {"ref": "${ images.web.ref }", "tag": "${ images.web.tag }"}}
STAGING = {"name": "staging", "clusterSelector": {"matchLabels": {"env": "staging"}}}
# `plain` clusters never read an image: their values do not change with it.
PLAIN = {"name": "plain", "clusterSelector": {"matchLabels": {"env": "plain"}}}
EVERYONE = {"name": "everyone", "clusterSelector": {}}
# `p` (env=plain) never reads the image, every other cluster does.
SPLIT = [{**PLAIN, "helm": {"values": {"x": 1}}}, {**EVERYONE, "helm": {"values": USES_WEB}}]


class Registry:
    """Tags by (repository, policy): the image resolver's answers, or why there is none."""

    def __init__(self) -> None:
        self.tags: dict[tuple[str, str], str] = {(WEB, "semver ^1.0"): "1.2.0"}
        self.unreachable = False
        self.asked: list[tuple[str, str, Mapping[str, str] | None]] = []

    def resolve(self, image: BundleImage, secret: Mapping[str, str] | None) -> ResolvedImage:
        policy = policy_text(image)
        self.asked.append((image.name, policy, secret))
        if self.unreachable:
            raise TransientError(f"{image.repository}: connection refused")
        tag = self.tags.get((image.repository, policy))
        if tag is None:
            raise InvalidInputError(f"{image.repository}: no tag matches {policy}")
        return ResolvedImage(
            name=image.name, repository=image.repository, tag=tag, digest=f"sha256:{tag}"
        )


@pytest.fixture
def registry() -> Registry:
    return Registry()


def app(targets: list[dict[str, Any]] | None = None, values: Any = None, **spec: Any) -> Any:
    helm = {"values": USES_WEB if values is None else values, "pollInterval": "10m"}
    return bundle(targets or [EVERYONE], helm=helm, images=[WEB_IMAGE], **spec)


def image_condition(store: MemoryStore) -> dict[str, Any]:
    conditions = status_of(store, BUNDLE, "app")["conditions"]
    found: dict[str, Any] = next(c for c in conditions if c["type"] == "ImagesResolved")
    return found


def values_of(store: MemoryStore, name: str) -> Any:
    return deployment_of(store, name)["spec"]["options"]["helm"]["values"]


def test_an_image_is_resolved_once_for_every_cluster(
    store: MemoryStore, start_manager: StartManager, registry: Registry
) -> None:
    create_world(store, world(cluster("a"), cluster("b"), app()))
    manager = start_manager(store, image_resolver=registry.resolve)
    settle(manager)
    assert registry.asked == [("web", "semver ^1.0", None)]
    rendered = manager.rows_rendered
    manager.resync()
    settle(manager)
    # within pollInterval: neither asked again nor rendered again
    assert (len(registry.asked), manager.rows_rendered) == (1, rendered)
    for name in ("a", "b"):
        assert values_of(store, name) == {
            "image": {"ref": f"{WEB}:1.2.0@sha256:1.2.0", "tag": "1.2.0"}
        }
    assert status_of(store, BUNDLE, "app")["resolvedImages"] == [
        {"name": "web", "repository": WEB, "tag": "1.2.0", "digest": "sha256:1.2.0"}
    ]
    condition = image_condition(store)
    assert (condition["status"], condition["reason"]) == ("True", "Resolved")


def test_a_target_override_resolves_apart(
    store: MemoryStore, start_manager: StartManager, registry: Registry
) -> None:
    registry.tags[(WEB, "semver >=2.0.0-0")] = "2.0.0-rc.1"
    targets: list[dict[str, Any]] = [{**STAGING, "images": [PRERELEASES]}, EVERYONE]
    clusters = (cluster("prod"), cluster("stage", {"env": "staging"}))
    create_world(store, world(*clusters, app(targets)))
    settle(start_manager(store, image_resolver=registry.resolve))
    assert sorted(p for _, p, _ in registry.asked) == ["semver >=2.0.0-0", "semver ^1.0"]
    assert values_of(store, "prod")["image"]["tag"] == "1.2.0"
    assert values_of(store, "stage")["image"]["tag"] == "2.0.0-rc.1"
    listed = [
        (r["tag"], r.get("target")) for r in status_of(store, BUNDLE, "app")["resolvedImages"]
    ]
    assert listed == [("1.2.0", None), ("2.0.0-rc.1", "staging")]


def test_a_new_tag_rolls_out_after_poll_interval_under_max_unavailable(
    store: MemoryStore, start_manager: StartManager, registry: Registry, clock: ManualClock
) -> None:
    names = ["a", "b", "c"]
    clusters = [*(cluster(n) for n in names), cluster("p", {"env": "plain"})]
    create_world(store, world(*clusters, app(SPLIT, {}, rolloutStrategy={"maxUnavailable": 1})))
    # Agents that stop checking in would not count as unavailable: keep them online.
    manager = start_manager(store, image_resolver=registry.resolve, offline_after=3600.0)
    settle(manager)
    for name in [*names, "p"]:
        report(store, name)
    settle(manager)
    plain_before = deployment_of(store, "p")["spec"]["deploymentID"]
    before = {n: deployment_of(store, n)["spec"]["deploymentID"] for n in names}
    registry.tags[(WEB, "semver ^1.0")] = "1.3.0"
    clock.advance(600.0)
    settle(manager)
    assert len(registry.asked) == 2
    staged = {n: "stagedDeploymentID" in deployment_of(store, n)["spec"] for n in names}
    assert sorted(staged.values()) == [False, True, True]
    for _ in names:
        for name in (n for n in names if not staged[n]):
            report(store, name)
        settle(manager)
        staged = {n: "stagedDeploymentID" in deployment_of(store, n)["spec"] for n in names}
    assert not any(staged.values())
    after = {n: deployment_of(store, n)["spec"]["deploymentID"] for n in names}
    assert all(after[n] != before[n] for n in names)
    assert {values_of(store, n)["image"]["tag"] for n in names} == {"1.3.0"}
    assert deployment_of(store, "p")["spec"]["deploymentID"] == plain_before


def test_a_new_tag_reaches_every_cluster_of_a_max_new_capped_rollout(
    store: MemoryStore, start_manager: StartManager, registry: Registry, clock: ManualClock
) -> None:
    # The default budget decides each cluster alone, so a capped pass could be continued by
    # batch: a pass that resolves images must still be planned in full when the poll comes.
    names = ["a", "b", "c", "d", "e"]
    create_world(store, world(*(cluster(n) for n in names), app(rolloutStrategy={"maxNew": 2})))
    manager = start_manager(store, image_resolver=registry.resolve, offline_after=3600.0)
    settle(manager)
    assert {values_of(store, n)["image"]["tag"] for n in names} == {"1.2.0"}
    registry.tags[(WEB, "semver ^1.0")] = "1.3.0"
    clock.advance(600.0)
    settle(manager)
    assert {values_of(store, n)["image"]["tag"] for n in names} == {"1.3.0"}


def test_an_unreachable_registry_holds_only_the_clusters_using_the_image(
    store: MemoryStore, start_manager: StartManager, registry: Registry, clock: ManualClock
) -> None:
    create_world(store, world(cluster("a"), cluster("p", {"env": "plain"}), app(SPLIT, {})))
    manager = start_manager(store, image_resolver=registry.resolve)
    settle(manager)
    using_before = deployment_of(store, "a")
    registry.unreachable = True
    clock.advance(600.0)
    store.patch(BUNDLE, "app", {"spec": {"helm": {"values": {"extra": "2"}}}}, WS)
    settle(manager)
    # `a` reads the image: it keeps exactly what it runs; `p` takes the change
    assert deployment_of(store, "a")["spec"] == using_before["spec"]
    assert values_of(store, "p") == {"x": 1, "extra": "2"}
    assert set(deployments(store)) == {("a", "app"), ("p", "app")}
    condition = image_condition(store)
    assert (condition["status"], condition["reason"]) == ("False", "RegistryUnavailable")
    assert condition["message"] == (
        f"image web: RegistryUnavailable: {WEB}: connection refused; holds back 1 cluster"
    )
    non_ready = status_of(store, BUNDLE, "app")["nonReady"]
    held = [r["cluster"] for r in non_ready if "image 'web' is not resolved" in r["message"]]
    assert held == [f"{WS}/a"]
    registry.unreachable = False
    clock.advance(60.0)  # past the retry backoff
    settle(manager)
    assert values_of(store, "a")["extra"] == "2"
    assert image_condition(store)["status"] == "True"


def test_a_policy_no_tag_matches_names_the_image_and_cause(
    store: MemoryStore, start_manager: StartManager, registry: Registry
) -> None:
    registry.tags.clear()
    create_world(store, world(cluster("a"), app()))
    settle(start_manager(store, image_resolver=registry.resolve))
    assert deployments(store) == {}
    condition = image_condition(store)
    assert (condition["status"], condition["reason"]) == ("False", "ImageRejected")
    assert f"image web: ImageRejected: {WEB}: no tag matches semver ^1.0" in condition["message"]


def encoded(data: dict[str, str]) -> dict[str, str]:
    return {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}


def test_the_secret_ref_is_read_from_the_workspace_and_its_creation_wakes_the_bundle(
    store: MemoryStore, start_manager: StartManager, registry: Registry
) -> None:
    image = {**WEB_IMAGE, "secretRef": {"name": "pull"}}
    helm = {"values": USES_WEB}
    create_world(store, world(cluster("a"), bundle([EVERYONE], helm=helm, images=[image])))
    manager = start_manager(store, image_resolver=registry.resolve)
    settle(manager)
    condition = image_condition(store)
    assert (condition["status"], condition["reason"]) == ("False", "CredentialsNotFound")
    assert f"Secret {WS}/pull with the registry credentials does not exist" in condition["message"]
    assert registry.asked == []
    secret = {
        "metadata": {"name": "pull", "namespace": WS},
        "type": "kubernetes.io/basic-auth",
        "data": encoded({"username": "u"}),
    }
    store.create(SECRET, secret)
    settle(manager)
    assert registry.asked == [("web", "semver ^1.0", {"username": "u"})]
    assert values_of(store, "a")["image"]["tag"] == "1.2.0"


def test_without_an_image_resolver_the_users_of_images_are_held(
    store: MemoryStore, start_manager: StartManager
) -> None:
    create_world(store, world(cluster("a"), cluster("p", {"env": "plain"}), app(SPLIT, {})))
    settle(start_manager(store))
    assert set(deployments(store)) == {("p", "app")}
    assert image_condition(store)["reason"] == "NoImageResolver"


def test_an_override_of_an_unknown_image_is_an_invalid_spec(
    store: MemoryStore, start_manager: StartManager, registry: Registry
) -> None:
    targets = [{**EVERYONE, "images": [{"name": "api", "platform": "linux/arm64"}]}]
    create_world(store, world(cluster("a"), app(targets)))
    settle(start_manager(store, image_resolver=registry.resolve))
    conditions = status_of(store, BUNDLE, "app")["conditions"]
    ready = next(c for c in conditions if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert "spec.targets[0].images[0].name: no image 'api' in spec.images" in ready["message"]
    assert registry.asked == []


def test_a_rejected_bundle_keeps_its_resolved_images_and_deployments(
    store: MemoryStore, start_manager: StartManager, registry: Registry
) -> None:
    create_world(store, world(cluster("a"), app()))
    manager = start_manager(store, image_resolver=registry.resolve)
    settle(manager)
    before = (status_of(store, BUNDLE, "app")["resolvedImages"], deployment_of(store, "a"))
    unknown = [{**EVERYONE, "images": [{"name": "api"}]}]
    store.patch(BUNDLE, "app", {"spec": {"targets": unknown}}, WS)
    settle(manager)
    after = (status_of(store, BUNDLE, "app")["resolvedImages"], deployment_of(store, "a"))
    assert after == before


def test_a_new_tag_that_fails_rolls_back_like_any_change(
    store: MemoryStore, start_manager: StartManager, registry: Registry, clock: ManualClock
) -> None:
    names = ["a", "b", "c"]
    strategy = {"maxUnavailable": 1, "onFailure": {"maxFailures": 0, "action": "Rollback"}}
    create_world(store, world(*(cluster(n) for n in names), app(rolloutStrategy=strategy)))
    manager = start_manager(store, image_resolver=registry.resolve, offline_after=3600.0)
    settle(manager)
    for name in names:
        report(store, name)
    settle(manager)
    registry.tags[(WEB, "semver ^1.0")] = "1.3.0"
    clock.advance(600.0)
    settle(manager)
    (first,) = [n for n in names if "stagedDeploymentID" not in deployment_of(store, n)["spec"]]
    assert values_of(store, first)["image"]["tag"] == "1.3.0"
    report(store, first, applied=False, deployed_error="image pull failed: 1.3.0")
    settle(manager)
    ready = next(c for c in status_of(store, BUNDLE, "app")["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "RolledBack")
    assert {values_of(store, n)["image"]["tag"] for n in names} == {"1.2.0"}
    staged = deployment_of(store, first)["spec"]["stagedOptions"]["helm"]["values"]
    assert staged["image"]["tag"] == "1.3.0"
