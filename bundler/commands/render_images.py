"""`spec.images` in the offline commands: resolved as the manager does with `render --resolve`, or
shown with their policy in place of the tag without it.

With a resolver, each distinct (image, effective selection) the targeted clusters want is asked
once, with the image's `secretRef` Secret when the inputs hold it (else the Docker config's
credentials, as the resolver was set up); an image that cannot be resolved holds the clusters whose
values read it (an error line each, as in the manager), the others render. Without one, the
preview is offline: `images.NAME.tag` is the policy (`<semver ^1.2>`), `.digest` empty, `.ref`
`repository:<semver ^1.2>`, and a warning says so.
"""

from __future__ import annotations

from bundler.api.bundle import Bundle
from bundler.core.images.wanted import (
    ImageAnswer,
    ImageFailure,
    ImageKey,
    ImageQuery,
    image_ref,
    resolved_images,
)
from bundler.core.planning import key
from bundler.errors import BundlerError, TransientError
from bundler.inputs import World
from bundler.resolution.resolvers import ImageResolverFn


def resolve_images(
    bundle: Bundle, queries: list[ImageQuery], world: World, resolver: ImageResolverFn
) -> dict[ImageKey, ImageAnswer]:
    """An answer for each query: the resolution, or the failure that holds its users back."""
    workspace = bundle.metadata.namespace or ""
    answers: dict[ImageKey, ImageAnswer] = {}
    for query in queries:
        image = query.image
        ref = image.secretRef
        secret = None if ref is None else world.secret_data(workspace, ref.name)
        try:
            answers[query.key] = resolver(image, secret).model_copy(update={"name": image.name})
        except BundlerError as error:
            reason = "RegistryUnavailable" if isinstance(error, TransientError) else "ImageRejected"
            answers[query.key] = ImageFailure(reason, error.message)
    return answers


def image_lines(
    bundle: Bundle, queries: list[ImageQuery], answers: dict[ImageKey, ImageAnswer] | None
) -> list[str]:
    """What render says on stderr of a Bundle's images: each resolution (as
    status.resolvedImages would list it), or the warning that they were not resolved."""
    where = f"Bundle {key(bundle.metadata.namespace, bundle.metadata.name)}"
    if not queries:
        return []
    if answers is None:
        names = ", ".join(sorted({q.image.name for q in queries}))
        return [
            f"warning: {where}: images ({names}) are resolved by the manager; their tags show the "
            "policy here (<semver ...>): pass --resolve to resolve them against the registry"
        ]
    lines = []
    for image in resolved_images(queries, answers):
        target = f" (target {image.target})" if image.target else ""
        lines.append(f"resolved: {where}: image {image.name}{target}: {image_ref(image)}")
    for query in queries:
        answer = answers.get(query.key)
        if isinstance(answer, ImageFailure):
            target = f" (target {query.target})" if query.target else ""
            lines.append(
                f"warning: {where}: image {query.image.name}{target} not resolved "
                f"({answer.reason}): {answer.message}"
            )
    return lines
