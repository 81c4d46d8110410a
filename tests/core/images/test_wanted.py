"""Images in planning: the queries a cluster asks, what templates see, who is held, and the IDs."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.images import ResolvedImage
from bundler.core.images.wanted import (
    ImageFailure,
    ImageQuery,
    ResolvedImages,
    image_queries,
    offline_images,
    resolved_images,
)
from bundler.core.planning import BundlePlan, plan_bundle, render_options
from bundler.core.targeting import match_targets
from bundler.core.templating.images import ImageNotResolvedError
from bundler.core.validation import validate_bundle
from bundler.errors import InvalidInputError
from tests.support.builders import WS, bundle, cluster, helm_of

REPO = "registry.example/team/web"
WEB = {"name": "web", "repository": REPO, "policy": {"semver": {"range": "^1.0"}}}
SIDECAR = {"name": "sidecar", "repository": "registry.example/sc", "policy": {"numerical": {}}}
PRERELEASES = {"name": "web", "policy": {"semver": {"range": ">=2.0.0-0"}}}
STAGING = {"name": "staging", "clusterSelector": {"matchLabels": {"env": "staging"}}}
EVERYONE = {"name": "everyone", "clusterSelector": {}}
PLAIN = {"name": "plain", "clusterSelector": {"matchLabels": {"plain": "yes"}}}
CLUSTERS = [
    cluster("prod-1", {"env": "prod"}),
    cluster("stage-1", {"env": "staging"}),
    cluster("other-1", {"env": "prod", "plain": "yes"}),
]
USES_WEB = {"image": "${ images.web.ref }", "tag": "${ images.web.tag }"}


def image_bundle(targets: list[dict[str, Any]], values: dict[str, Any], **spec: Any) -> Any:
    return bundle(targets, helm={"values": values}, images=[WEB, SIDECAR], **spec)


def resolved(tag: str, digest: str = "sha256:1", name: str = "web") -> ResolvedImage:
    return ResolvedImage(name=name, repository=REPO, tag=tag, digest=digest)


def queries_of(b: Any, name: str) -> dict[str, ImageQuery]:
    c = next(c for c in CLUSTERS if c.metadata.name == name)
    return {q.image.name: q for q in image_queries(b, match_targets(b, c, []))}


def answers(b: Any, web: dict[str, ResolvedImage | ImageFailure]) -> ResolvedImages:
    """Answers for every query of `b`'s clusters: `web` by the target that chose it (`""`: the
    Bundle's own selection); the sidecar always resolved."""
    found: dict[Any, Any] = {}
    for c in CLUSTERS:
        for q in image_queries(b, match_targets(b, c, [])):
            if q.image.name == "sidecar":
                found[q.key] = resolved("7", "sha256:s", name="sidecar")
            elif (q.target or "") in web:
                found[q.key] = web[q.target or ""]
    return found


def by_cluster(plan: BundlePlan) -> dict[str, Any]:
    rows: dict[str, Any] = {d.cluster.split("/")[1]: d for d in plan.deployments}
    rows.update({e.cluster.split("/")[1]: e.message for e in plan.errors})
    return rows


def test_a_target_override_is_a_query_of_its_own() -> None:
    b = image_bundle([{**STAGING, "images": [PRERELEASES]}, EVERYONE], USES_WEB)
    prod, stage = queries_of(b, "prod-1"), queries_of(b, "stage-1")
    assert prod["web"].target is None and stage["web"].target == "staging"
    assert prod["web"].key != stage["web"].key
    assert stage["web"].image.policy.semver is not None
    assert stage["web"].image.policy.semver.range == ">=2.0.0-0"
    assert stage["web"].image.repository == REPO
    assert prod["sidecar"].key == stage["sidecar"].key


def test_all_matches_lays_overrides_in_target_order() -> None:
    platform = {"name": "web", "platform": "linux/arm64"}
    b = image_bundle(
        [{**EVERYONE, "images": [platform]}, {**STAGING, "images": [PRERELEASES]}],
        USES_WEB,
        targetMode="AllMatches",
    )
    web = queries_of(b, "stage-1")["web"]
    assert (web.target, web.image.platform) == ("staging", "linux/arm64")
    assert web.image.policy.semver is not None and web.image.policy.semver.range == ">=2.0.0-0"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param("${ images.web.ref }", f"{REPO}:1.2.0@sha256:1", id="ref"),
        pytest.param("${ images.web.repository }", REPO, id="repository"),
        pytest.param("${ images.web.tag }", "1.2.0", id="tag"),
        pytest.param("${ images.web.digest }", "sha256:1", id="digest"),
        pytest.param("${ images['web'].tag }-x", "1.2.0-x", id="item-in-text"),
        pytest.param("${ images | length }", 2, id="native-type-kept"),
    ],
)
def test_templates_read_the_resolved_image(template: str, expected: Any) -> None:
    b = image_bundle([EVERYONE], {"v": template})
    plan = plan_bundle(b, CLUSTERS[:1], [], images=answers(b, {"": resolved("1.2.0")}))
    assert by_cluster(plan)["prod-1"].options.helm.values == {"v": expected}


UNREACHABLE = ImageFailure("RegistryUnavailable", "registry.example: connection refused")


@pytest.mark.parametrize(
    "template",
    [
        pytest.param("${ images.web.tag }", id="attribute"),
        pytest.param("${ images.web.tag | default('latest') }", id="default-does-not-hide-it"),
        pytest.param("${ images['web'].ref }", id="item"),
        pytest.param("${ images }", id="every-image"),
        pytest.param("${ images.items() | list | length }", id="items"),
        pytest.param("x-${ images.web.tag }", id="mixed-text"),
    ],
)
def test_a_cluster_reading_an_unresolved_image_is_held(template: str) -> None:
    b = image_bundle([EVERYONE], {"v": template})
    plan = plan_bundle(b, CLUSTERS[:1], [], images=answers(b, {"": UNREACHABLE}))
    assert not plan.deployments
    (message,) = [e.message for e in plan.errors]
    assert "image 'web' is not resolved: registry.example: connection refused" in message


def per_target_values() -> Any:
    """staging and everyone read `web` (staging with its override); `plain` reads no image."""
    return image_bundle(
        [
            {**STAGING, "images": [PRERELEASES], "helm": {"values": USES_WEB}},
            {**PLAIN, "helm": {"values": {"x": 1}}},
            {**EVERYONE, "helm": {"values": USES_WEB}},
        ],
        {},
    )


def plan_with(b: Any, web: dict[str, ResolvedImage | ImageFailure]) -> dict[str, Any]:
    return by_cluster(plan_bundle(b, CLUSTERS, [], images=answers(b, web)))


def test_only_the_clusters_using_an_unresolved_image_are_held() -> None:
    b = per_target_values()
    ok = plan_with(b, {"": resolved("1.2.0"), "staging": resolved("2.0.0-rc.1")})
    assert ok["prod-1"].options.helm.values["tag"] == "1.2.0"
    assert ok["stage-1"].options.helm.values["tag"] == "2.0.0-rc.1"
    held = plan_with(b, {"": resolved("1.2.0"), "staging": UNREACHABLE})
    assert "image 'web' is not resolved" in held["stage-1"]
    assert held["prod-1"].deployment_id == ok["prod-1"].deployment_id
    all_held = plan_with(b, {"": UNREACHABLE, "staging": UNREACHABLE})
    assert isinstance(all_held["prod-1"], str) and isinstance(all_held["stage-1"], str)
    assert all_held["other-1"].deployment_id == ok["other-1"].deployment_id


def test_a_new_tag_changes_the_ids_of_the_clusters_using_it_only() -> None:
    b = per_target_values()
    before = plan_with(b, {"": resolved("1.2.0"), "staging": resolved("2.0.0-rc.1")})
    after = plan_with(b, {"": resolved("1.3.0", "sha256:2"), "staging": resolved("2.0.0-rc.1")})
    assert before["prod-1"].deployment_id != after["prod-1"].deployment_id
    assert after["prod-1"].options.helm.values["image"] == f"{REPO}:1.3.0@sha256:2"
    assert before["stage-1"].deployment_id == after["stage-1"].deployment_id
    assert before["other-1"].deployment_id == after["other-1"].deployment_id


def test_values_that_never_read_an_image_keep_their_id() -> None:
    plain = bundle([EVERYONE], helm={"values": {"x": "${ cluster.name }"}})
    with_images = image_bundle([EVERYONE], {"x": "${ cluster.name }"})
    plans = [
        plan_bundle(with_images, CLUSTERS, [], images=answers(with_images, {"": resolved("9")})),
        plan_bundle(with_images, CLUSTERS, [], images=answers(with_images, {"": UNREACHABLE})),
        plan_bundle(plain, CLUSTERS, []),
    ]
    ids = [[d.deployment_id for d in p.deployments] for p in plans]
    assert ids[0] == ids[1] == ids[2] and len(ids[0]) == len(CLUSTERS)


def test_the_answers_behind_images_are_out_of_the_sandbox_reach() -> None:
    b = image_bundle([EVERYONE], {"v": "${ images._answers }"})
    plan = plan_bundle(b, CLUSTERS[:1], [], images=answers(b, {"": UNREACHABLE}))
    (message,) = [e.message for e in plan.errors]
    assert "not allowed in the template sandbox" in message


def test_offline_every_image_shows_its_policy() -> None:
    b = image_bundle([EVERYONE], {"image": "${ images.web.ref }", "sc": "${ images.sidecar.tag }"})
    (d,) = plan_bundle(b, CLUSTERS[:1], []).deployments
    assert helm_of(d.options).values == {"image": f"{REPO}:<semver ^1.0>", "sc": "<numerical asc>"}


def test_an_unanswered_query_is_not_resolved_yet() -> None:
    b = image_bundle([EVERYONE], USES_WEB)
    plan = plan_bundle(b, CLUSTERS[:1], [], images={})
    (message,) = [e.message for e in plan.errors]
    assert "image 'web' has not been resolved yet" in message


def test_the_held_error_names_the_image_and_why() -> None:
    b = image_bundle([EVERYONE], {"deep": {"image": "${ images.web.ref }"}})
    decision = match_targets(b, CLUSTERS[0], [])
    with pytest.raises(ImageNotResolvedError) as err:
        render_options(b, CLUSTERS[0], decision, {}, answers(b, {"": UNREACHABLE}))
    assert (err.value.image, err.value.reason) == ("web", "RegistryUnavailable")
    assert err.value.field == "values.deep.image"
    assert err.value.obj == f"Bundle {WS}/app for Cluster {WS}/prod-1"


def test_status_lists_each_resolution_once_bundle_first() -> None:
    b = image_bundle([{**STAGING, "images": [PRERELEASES]}, EVERYONE], USES_WEB)
    every = [q for c in ("prod-1", "stage-1", "other-1") for q in queries_of(b, c).values()]
    found = answers(b, {"": resolved("1.2.0"), "staging": resolved("2.0.0-rc.1")})
    listed = [(r.name, r.tag, r.target) for r in resolved_images(every, found)]
    assert listed == [
        ("sidecar", "7", None),
        ("web", "1.2.0", None),
        ("web", "2.0.0-rc.1", "staging"),
    ]
    assert offline_images(every)[every[0].key].digest == ""


@pytest.mark.parametrize(
    ("images", "targets", "field", "message"),
    [
        pytest.param(
            [WEB, {**SIDECAR, "name": "web"}],
            [EVERYONE],
            "spec.images[1].name",
            "image name 'web' is already used by spec.images[0]",
            id="duplicate-name",
        ),
        pytest.param(
            [WEB],
            [EVERYONE, {**STAGING, "images": [{"name": "api", "platform": "linux/arm64"}]}],
            "spec.targets[1].images[0].name",
            "no image 'api' in spec.images to override (images: web)",
            id="override-of-unknown-image",
        ),
        pytest.param(
            [WEB],
            [{**STAGING, "images": [PRERELEASES, {"name": "web", "platform": "linux/arm64"}]}],
            "spec.targets[0].images[1].name",
            "image 'web' is overridden twice in this target",
            id="overridden-twice",
        ),
        pytest.param(
            [{**WEB, "policy": {"semver": {"range": "not a range"}}}],
            [EVERYONE],
            "spec.images[0].policy.semver.range",
            "invalid version constraint 'not a range': expected a version at 'not a range'",
            id="bad-range",
        ),
        pytest.param(
            [SIDECAR, {**WEB, "filterTags": {"pattern": "^(?P<ts>[0-9]+)$", "extract": "$no"}}],
            [EVERYONE],
            "spec.images[1].filterTags.extract",
            "$no is not a group of filterTags.pattern (its named groups: $ts)",
            id="extract-of-no-group",
        ),
        pytest.param(
            [WEB],
            [{**STAGING, "images": [{"name": "web", "filterTags": {"pattern": "["}}]}],
            "spec.targets[0].images[0].filterTags.pattern",
            "'[' is not a regular expression (RE2 syntax, as Flux): missing ]: [",
            id="override-pattern",
        ),
    ],
)
def test_invalid_images_name_the_field(
    images: list[dict[str, Any]], targets: list[dict[str, Any]], field: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(bundle(targets, images=images))
    assert (err.value.field, err.value.message) == (field, message)
    assert err.value.obj == f"Bundle {WS}/app"


def test_clusters_reading_the_same_image_answer_share_one_render() -> None:
    b = image_bundle([EVERYONE], USES_WEB)
    first = plan_bundle(b, CLUSTERS, [], images=answers(b, {"": resolved("1.2.0")}))
    assert len({id(d.options) for d in first.deployments}) == 1
    later = plan_bundle(b, CLUSTERS, [], images=answers(b, {"": resolved("1.3.0")}))
    assert {(helm_of(d.options).values or {})["tag"] for d in later.deployments} == {"1.3.0"}
    held = plan_bundle(b, CLUSTERS, [], images=answers(b, {"": UNREACHABLE}))
    assert not held.deployments and len(held.errors) == len(CLUSTERS)
