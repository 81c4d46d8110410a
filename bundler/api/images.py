"""`spec.images` of a Bundle: container images whose tags the manager resolves centrally.

An image names a repository and a policy choosing one of its tags, with Flux's ImagePolicy
semantics (semver range, alphabetical or numerical order, `filterTags` with a named group to
extract), plus `ignoreTags` globs and a `platform` the chosen tag's index must offer. Templates see
the resolved image as `images.NAME`; a target may override how an image is chosen
(`targets[].images`), e.g. a staging target following prereleases.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from bundler.api.base import ApiModel
from bundler.api.meta import LocalObjectReference

# The alias templates use (`images.web.tag`): an identifier, so attribute access works.
IMAGE_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"
# os/arch[/variant], as in an OCI image index's platform (`linux/amd64`, `linux/arm/v7`).
PLATFORM_PATTERN = r"^[a-z0-9]+/[a-z0-9_]+(/[a-z0-9]+)?$"


class SortOrder(StrEnum):
    """Flux's order: `asc` picks the last tag in ascending order (the highest), `desc` the first."""

    ASC = "asc"
    DESC = "desc"


class SemverPolicy(ApiModel):
    """The highest tag that is a semantic version within `range` (prereleases only when the range
    names one, as Flux)."""

    range: str = Field(min_length=1)


class OrderPolicy(ApiModel):
    order: SortOrder = SortOrder.ASC


class ImagePolicyChoice(ApiModel):
    """Exactly one of semver, alphabetical, numerical."""

    semver: SemverPolicy | None = None
    alphabetical: OrderPolicy | None = None
    numerical: OrderPolicy | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ImagePolicyChoice:
        names = ("semver", "alphabetical", "numerical")
        chosen = [n for n in names if getattr(self, n) is not None]
        if len(chosen) != 1:
            raise ValueError(
                "exactly one of semver, alphabetical, numerical must be set"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        return self


class FilterTags(ApiModel):
    """Tags not matching `pattern` (a regular expression) are not candidates; `extract` (e.g.
    `$ts`, a named group of the pattern) is what the policy then orders."""

    pattern: str = Field(min_length=1)
    extract: str | None = None


class ImageSelection(ApiModel):
    """How an image's tag is chosen; a target's override sets only what it changes."""

    policy: ImagePolicyChoice | None = None
    filterTags: FilterTags | None = None
    ignoreTags: list[str] | None = None
    platform: str | None = Field(default=None, pattern=PLATFORM_PATTERN)


class BundleImage(ImageSelection):
    """One image of a Bundle: `name` is the alias templates use, `repository` where it lives
    (`registry/path`, no tag), `policy` is required here."""

    name: str = Field(pattern=IMAGE_NAME_PATTERN)
    repository: str = Field(min_length=1)
    policy: ImagePolicyChoice
    secretRef: LocalObjectReference | None = None
    # Plain HTTP to the registry (loopback registries are plain HTTP without it).
    insecure: bool | None = None


class TargetImage(ImageSelection):
    """A target's override of the Bundle image called `name`."""

    name: str = Field(pattern=IMAGE_NAME_PATTERN)


class ResolvedImage(ApiModel):
    """What the manager resolved an image to; `target` is set when a target's override chose it."""

    name: str
    repository: str
    tag: str
    digest: str
    target: str | None = None
