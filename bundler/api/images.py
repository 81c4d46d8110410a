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
    """A SemVer range in Helm's syntax (^1.4, ~1.2, ">=1.0 <2"; >=2.0.0-0 admits prereleases);
    a leading v and partial versions in tags are read as Flux reads them."""


class OrderPolicy(ApiModel):
    """The last tag in the chosen order."""

    order: SortOrder = SortOrder.ASC
    """asc (default): the last value in ascending order, that is the highest; desc: the
    lowest."""


class ImagePolicyChoice(ApiModel):
    """How the tag is chosen, with Flux's ImagePolicy semantics: exactly one of semver,
    alphabetical, numerical."""

    semver: SemverPolicy | None = None
    """The highest tag within a SemVer range."""
    alphabetical: OrderPolicy | None = None
    """The last tag in alphabetical order (by default the greatest)."""
    numerical: OrderPolicy | None = None
    """The last tag in numerical order (by default the greatest); tags (or extracts) that are
    not decimal numbers are skipped."""

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
    """A regular expression in RE2 syntax (Go's, as Flux), matched anywhere in the tag; named
    groups as (?P<name>...). At most 256 characters."""
    extract: str | None = None
    """What the policy orders, expanded from the match: $name, ${name} or $1 (a named group must
    exist in the pattern), $$ for a dollar. Unset: the whole tag."""


class ImageSelection(ApiModel):
    """How an image's tag is chosen; a target's override sets only what it changes."""

    policy: ImagePolicyChoice | None = None
    """How the tag is chosen: exactly one of semver, alphabetical, numerical (a target's
    replaces the Bundle image's)."""
    filterTags: FilterTags | None = None
    """Only tags matching this pattern are candidates, ordered by what it extracts."""
    ignoreTags: list[str] | None = None
    """Globs (*, ?, [abc]) matched against the whole tag, case-sensitive: matching tags are
    dropped before any other filter (at most 64)."""
    platform: str | None = Field(default=None, pattern=PLATFORM_PATTERN)
    """os/arch[/variant], e.g. linux/arm64 or linux/arm/v7: the best tags are read in turn until
    one whose image index offers this platform; without a variant any variant will do."""


class BundleImage(ImageSelection):
    """One image of a Bundle: `name` is the alias templates use, `repository` where it lives
    (`registry/path`, no tag), `policy` is required here."""

    name: str = Field(pattern=IMAGE_NAME_PATTERN)
    """The alias templates read (images.NAME.repository, .tag, .digest, .ref): an identifier
    (letters, digits and _, not starting with a digit, at most 63), unique in the Bundle."""
    repository: str = Field(min_length=1)
    """The image's repository as HOST[:PORT]/PATH, without a tag; the host is always explicit
    (no Docker Hub default)."""
    policy: ImagePolicyChoice
    """How the tag is chosen (required here): exactly one of semver, alphabetical,
    numerical."""
    secretRef: LocalObjectReference | None = None
    """A Secret in the Bundle's workspace with the registry's credentials
    (kubernetes.io/dockerconfigjson, or username and password); the manager reads it to list
    tags."""
    insecure: bool | None = None
    """Speak plain HTTP to the registry (loopback registries always are). Default false."""


class TargetImage(ImageSelection):
    """A target's override of the Bundle image called `name`."""

    name: str = Field(pattern=IMAGE_NAME_PATTERN)
    """The spec.images entry this overrides (each at most once per target)."""


class ResolvedImage(ApiModel):
    """What the manager resolved an image to; `target` is set when a target's override chose it."""

    name: str
    """The image's name in spec.images."""
    repository: str
    """The image's repository."""
    tag: str
    """The tag the policy chose."""
    digest: str
    """The digest of the manifest the tag points at (sha256:...), an image index's for a
    multi-platform image."""
    target: str | None = None
    """The target whose override chose this resolution; unset: the Bundle's own selection."""
