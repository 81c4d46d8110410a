"""An image policy's order over candidate tags, with Flux's ImagePolicy semantics.

- `semver: {range}`: values that are SemVer versions the range allows (bundler.core.versions:
  Masterminds constraints, a leading `v` and partial versions accepted as Flux's semver library
  reads tags), highest first; a prerelease only when the range names one (`>=2.0.0-0`).
- `alphabetical: {order}`: `asc` (the default) picks the last value in ascending order, `desc` the
  first.
- `numerical: {order}`: likewise over values that are decimal numbers (`42`, `-1.5`, `1e3`);
  other values are skipped.

Values are what `filterTags` left (bundler.core.images.filters). Several tags with one value
(`v1.0.0` and `1.0.0`, or one extract) are ordered by their text, greatest first, so the answer
never depends on the order in which the registry lists tags.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from decimal import Decimal

from bundler.api.images import BundleImage, SortOrder
from bundler.core.images.filters import Candidate, Considered, consider, image_field
from bundler.core.versions import SemVer, allowed_newest_first, parse_constraint
from bundler.errors import InvalidInputError

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def check_policy(image: BundleImage) -> None:
    """InvalidInputError naming the field when `image`'s policy or filters cannot be used (a
    pattern that does not compile, an extract naming no group, a bad range, too many globs), so
    that it is told before any registry is asked."""
    ranked_tags(image, ())


def ranked_tags(image: BundleImage, tags: Sequence[str]) -> list[str]:
    """The tags `image`'s policy admits among `tags`, best first (empty when none)."""
    candidates = consider(image, tags).candidates
    return _ranked(image, candidates)


def choose_tag(image: BundleImage, tags: Sequence[str]) -> str:
    """The tag `image`'s policy chooses among `tags`; InvalidInputError naming the image, the
    repository, the policy and how many tags were seen when none qualifies."""
    considered = consider(image, tags)
    ranked = _ranked(image, considered.candidates)
    if not ranked:
        raise no_candidate(image, tags, considered)
    return ranked[0]


def policy_text(image: BundleImage) -> str:
    """The policy as messages show it: `semver range '>=1.0'`, `numerical (asc)`."""
    policy = image.policy
    if policy.semver is not None:
        return f"semver range {policy.semver.range!r}"
    if policy.alphabetical is not None:
        return f"alphabetical ({policy.alphabetical.order})"
    assert policy.numerical is not None  # ImagePolicyChoice holds exactly one
    return f"numerical ({policy.numerical.order})"


def no_candidate(
    image: BundleImage, tags: Sequence[str], considered: Considered
) -> InvalidInputError:
    """The error for a policy that admits none of `tags` (`considered`: what the filters left)."""
    message = (
        f"no tag of {image.repository} matches {policy_text(image)}: {considered.seen} tags seen"
    )
    if len(considered.candidates) != considered.seen:
        message += f", {len(considered.candidates)} left after ignoreTags and filterTags"
    if image.policy.semver is not None and any(_is_prerelease(tag) for tag in tags):
        message += "; prereleases match only a range that names one, e.g. '>=1.0.0-0'"
    return InvalidInputError(message, field=image_field(image))


def _is_prerelease(tag: str) -> bool:
    try:
        return SemVer.parse(tag).is_prerelease
    except InvalidInputError:
        return False


def _ranked(image: BundleImage, candidates: Sequence[Candidate]) -> list[str]:
    policy = image.policy
    if policy.semver is not None:
        wanted = parse_constraint(
            policy.semver.range, field=image_field(image, "policy.semver.range")
        )
        order = allowed_newest_first(wanted, {c.value for c in candidates})
        rank = {value: index for index, value in enumerate(order)}
        kept = [c for c in candidates if c.value in rank]
        return [c.tag for c in sorted(_by_text(kept), key=lambda c: rank[c.value])]
    if policy.alphabetical is not None:
        return _ordered(candidates, policy.alphabetical.order, str)
    assert policy.numerical is not None  # ImagePolicyChoice holds exactly one
    numeric = [c for c in candidates if _DECIMAL.fullmatch(c.value)]
    return _ordered(numeric, policy.numerical.order, Decimal)


def _ordered(
    candidates: Sequence[Candidate], order: SortOrder, key: Callable[[str], str | Decimal]
) -> list[str]:
    """Best first: `asc` picks the highest value, `desc` the lowest."""
    descending = order is SortOrder.ASC
    ranked = sorted(_by_text(candidates), key=lambda c: key(c.value), reverse=descending)
    return [c.tag for c in ranked]


def _by_text(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Greatest value text, then tag text, first: the tie-break the (stable) sorts above keep."""
    return sorted(candidates, key=lambda c: (c.value, c.tag), reverse=True)
