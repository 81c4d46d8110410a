"""The images one cluster's values may use, as resolutions asked of the manager and answered.

A cluster's images are the Bundle's `spec.images`, each with the overrides of the targets that
decided for the cluster laid over it in order (bundler.core.images.selection). Each distinct
(image name, effective selection) is one `ImageQuery`, resolved once centrally (by the manager, or
`bundler render --resolve`) whatever the number of clusters asking; the answers come back as data,
keyed the same way, so a staging target following prereleases resolves apart from the rest. An
answer is a ResolvedImage or an `ImageFailure` saying why there is none: the clusters whose values
read that image are held (bundler.core.templating.images), the others are unaffected.

Offline (no resolver at all), `offline_images` answers every query with the policy written in
place of the tag (`<semver ^1.2>`), so a preview shows where each image goes without a registry.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bundler.api.bundle import Bundle
from bundler.api.images import BundleImage, ResolvedImage, TargetImage
from bundler.core.images.selection import effective_image
from bundler.core.targeting import TargetDecision
from bundler.core.templating.images import ImageView, UnresolvedImage

# (image name, the effective selection as canonical JSON) -> one resolution.
ImageKey = tuple[str, str]


@dataclass(frozen=True)
class ImageFailure:
    """Why an image has no resolution: `reason` a CamelCase word, `message` the cause."""

    reason: str
    message: str


ImageAnswer = ResolvedImage | ImageFailure
ResolvedImages = Mapping[ImageKey, ImageAnswer]


@dataclass(frozen=True)
class ImageQuery:
    """One image as a cluster wants it: the Bundle's image with its targets' overrides, and the
    target whose override changed it (None: the Bundle's own selection)."""

    image: BundleImage
    target: str | None = None

    @functools.cached_property
    def key(self) -> ImageKey:
        selection = self.image.model_dump(mode="json", exclude_none=True)
        return (self.image.name, json.dumps(selection, sort_keys=True, separators=(",", ":")))


def image_queries(bundle: Bundle, decision: TargetDecision) -> tuple[ImageQuery, ...]:
    """The images of `bundle` as the cluster `decision` is for wants them, in spec order."""
    overrides: dict[str, list[tuple[str, TargetImage]]] = {}
    for result in decision.contributing:
        for override in result.target.images:
            overrides.setdefault(override.name, []).append((result.label, override))
    queries = []
    for image in bundle.spec.images:
        target = None
        for label, override in overrides.get(image.name, ()):
            image, target = effective_image(image, override), label
        queries.append(ImageQuery(image, target))
    return tuple(queries)


def answers_for(queries: Iterable[ImageQuery], answers: ResolvedImages) -> dict[str, ImageAnswer]:
    """Each image name with its answer; a query nobody answered is a failure saying so."""
    return {
        q.image.name: answers.get(q.key)
        or ImageFailure("NotResolved", f"image {q.image.name!r} has not been resolved yet")
        for q in queries
    }


def policy_text(image: BundleImage) -> str:
    """The policy as one would say it: `semver ^1.2`, `numerical asc`, `alphabetical desc`."""
    policy = image.policy
    if policy.semver is not None:
        return f"semver {policy.semver.range}"
    order = policy.numerical or policy.alphabetical
    kind = "numerical" if policy.numerical is not None else "alphabetical"
    return f"{kind} {order.order.value if order else ''}".strip()


def offline_images(queries: Iterable[ImageQuery]) -> dict[ImageKey, ResolvedImage]:
    """Placeholder answers for a preview without a registry: the tag is `<POLICY>`, no digest."""
    return {
        q.key: ResolvedImage(
            name=q.image.name,
            repository=q.image.repository,
            tag=f"<{policy_text(q.image)}>",
            digest="",
            target=q.target,
        )
        for q in queries
    }


def image_ref(image: ResolvedImage) -> str:
    """`repository:tag@digest` (without `@digest` when there is none, as offline)."""
    ref = f"{image.repository}:{image.tag}"
    return f"{ref}@{image.digest}" if image.digest else ref


def image_view(answer: ImageAnswer) -> ImageView:
    """How a template sees an answer: the image's fields, or why it has none."""
    if isinstance(answer, ImageFailure):
        return UnresolvedImage(answer.reason, answer.message)
    return {
        "repository": answer.repository,
        "tag": answer.tag,
        "digest": answer.digest,
        "ref": image_ref(answer),
    }


def resolved_images(queries: Iterable[ImageQuery], answers: ResolvedImages) -> list[ResolvedImage]:
    """`status.resolvedImages`: each resolved query once, the Bundle's own selections first,
    then the targets' overrides, each by name."""
    seen: dict[ImageKey, ResolvedImage] = {}
    for query in queries:
        answer = answers.get(query.key)
        if isinstance(answer, ResolvedImage) and (query.key not in seen or query.target is None):
            seen[query.key] = answer.model_copy(update={"target": query.target})
    return sorted(seen.values(), key=lambda r: (r.target is not None, r.target or "", r.name))
