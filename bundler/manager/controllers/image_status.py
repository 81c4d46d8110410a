"""What a Bundle says of its images: `status.resolvedImages` and the ImagesResolved condition.

The bundle controller records an ImagesOutcome (bundler.manager.memo.outcomes) with each pass (None
for a Bundle without images); the status controller writes it. ImagesResolved is True while every
image the targeted clusters want has a resolution, else False with the first failure's reason
(RegistryUnavailable, ImageRejected, CredentialsNotFound, NoImageResolver, NotResolved) and a
message naming each image that failed, why, and how many clusters it holds back (those whose values
read it; they keep what
they run). A Bundle without images has no such condition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bundler.api.meta import Condition
from bundler.core.images.wanted import ImageFailure, resolved_images
from bundler.core.state import ConditionType, condition
from bundler.manager.memo.outcomes import ImagesOutcome, Rejection
from bundler.manager.memo.rows import BundleRows

REASON_RESOLVED = "Resolved"


def images_outcome(planned: BundleRows, has_images: bool) -> ImagesOutcome | None:
    """The images part of a pass's outcome, from its rows and image answers."""
    if not has_images:
        return None
    queries = planned.image_queries
    held = Counter(row.held_by for row in planned.rows if row.held_by is not None)
    failures = []
    for query in queries:
        answer = planned.images.get(query.key)
        if isinstance(answer, ImageFailure):
            failures.append((query.image.name, query.target, answer))
    resolved = tuple(resolved_images(queries, planned.images))
    if not failures:
        return ImagesOutcome(resolved)
    lines = []
    for name, target, failure in failures:
        where = f"image {name}" + (f" (target {target})" if target else "")
        count = held[name]
        holds = f"; holds back {count} cluster{'s' if count != 1 else ''}" if count else ""
        lines.append(f"{where}: {failure.reason}: {failure.message}{holds}")
    return ImagesOutcome(resolved, Rejection(failures[0][2].reason, "; ".join(lines)))


def images_condition(
    conditions: Sequence[Condition],
    images: ImagesOutcome | None,
    now: str,
    previous: Sequence[Condition],
) -> list[Condition]:
    """`conditions` with ImagesResolved set from `images`, or without it for a Bundle without."""
    kind = ConditionType.IMAGES_RESOLVED.value
    kept = [c for c in conditions if c.type != kind]
    if images is None:
        return kept
    old = [c for c in previous if c.type == kind]
    if images.failed is not None:
        why = images.failed
        return condition(kind, False, why.reason, why.message, now, [*kept, *old])
    count = len(images.resolved)
    message = f"{count} image resolution{'s' if count != 1 else ''}"
    return condition(kind, True, REASON_RESOLVED, message, now, [*kept, *old])
