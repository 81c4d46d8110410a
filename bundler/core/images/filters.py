"""Which tags an image policy considers, and the value it orders each by.

Applied in this order to the tags a registry lists:
1. tags longer than an OCI tag may be (128 characters) are not tags: skipped;
2. `ignoreTags`: globs in the manner of fnmatch (`*`, `?`, `[abc]`), case-sensitive and matching
   the whole tag (`*-dev` drops `1.2.0-dev`);
3. `filterTags.pattern`: a regular expression that must match somewhere in the tag (unanchored),
   in RE2 syntax, the syntax of Flux's Go `regexp` (`(?P<name>...)` or `(?<name>...)`);
4. `filterTags.extract`: a template (`$name`, `${name}`, `$1`, `$$` for a dollar) expanded from
   the match, as Go's `Regexp.ExpandString`; the result is what the policy orders. An optional
   group that did not take part expands to nothing; a name the pattern lacks is an error here
   (Go would silently expand it to nothing, so every tag would look alike).

Patterns come from Bundle authors and run in the manager, so they are bounded: RE2 (google-re2)
matches in time linear in the tag, whatever the pattern (no backtracking: `(a|a)*b` cannot stall
the manager as it would Python's `re`), and keeps each compiled pattern within its memory budget;
a pattern or glob longer than MAX_PATTERN_LENGTH is refused, and every tag is at most 128
characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import re2

from bundler.api.images import BundleImage, FilterTags
from bundler.errors import InvalidInputError

MAX_TAG_LENGTH = 128
MAX_PATTERN_LENGTH = 256
MAX_IGNORE_GLOBS = 64
# $$, ${name}, $name (the longest run of word characters, as Go reads it).
_TEMPLATE_REFERENCE = re.compile(r"\$(?:(\$)|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


@dataclass(frozen=True)
class Candidate:
    """A tag the policy may choose, and the value it is ordered by (the tag, or its extract)."""

    tag: str
    value: str


@dataclass(frozen=True)
class Considered:
    """The candidates, and how many distinct tags were seen before the filters (for messages)."""

    candidates: tuple[Candidate, ...]
    seen: int


def image_field(image: BundleImage, path: str = "") -> str:
    """`spec.images[NAME]`, or a field under it (`path`: `filterTags.pattern`)."""
    return f"spec.images[{image.name}]" + (f".{path}" if path else "")


def consider(image: BundleImage, tags: Iterable[str]) -> Considered:
    """The candidates among `tags`: `image`'s ignoreTags and filterTags applied."""
    ignored = _ignore_globs(image)
    extractor = None if image.filterTags is None else _Extractor.of(image, image.filterTags)
    seen: set[str] = set()
    candidates: list[Candidate] = []
    for tag in tags:
        if tag in seen:
            continue
        seen.add(tag)
        if len(tag) > MAX_TAG_LENGTH or any(fnmatchcase(tag, glob) for glob in ignored):
            continue
        value = tag if extractor is None else extractor.value(tag)
        if value is not None:
            candidates.append(Candidate(tag, value))
    return Considered(tuple(candidates), len(seen))


def _ignore_globs(image: BundleImage) -> Sequence[str]:
    globs = image.ignoreTags or []
    if len(globs) > MAX_IGNORE_GLOBS:
        raise InvalidInputError(
            f"{len(globs)} globs, more than the {MAX_IGNORE_GLOBS} allowed",
            field=image_field(image, "ignoreTags"),
        )
    for index, glob in enumerate(globs):
        if len(glob) > MAX_PATTERN_LENGTH:
            raise InvalidInputError(
                f"the glob is {len(glob)} characters, more than the {MAX_PATTERN_LENGTH} allowed",
                field=image_field(image, f"ignoreTags[{index}]"),
            )
    return globs


@dataclass(frozen=True)
class _Extractor:
    """A compiled `filterTags`: the pattern, and the extract template cut into literal text and
    group references (None: the whole tag)."""

    pattern: Any  # a compiled re2 pattern (google-re2 ships no type hints)
    template: tuple[str | int, ...] | None

    @classmethod
    def of(cls, image: BundleImage, filter_tags: FilterTags) -> _Extractor:
        pattern = _compile(filter_tags.pattern, image_field(image, "filterTags.pattern"))
        template = (
            None
            if filter_tags.extract is None
            else _parse_template(
                filter_tags.extract, pattern, image_field(image, "filterTags.extract")
            )
        )
        return cls(pattern, template)

    def value(self, tag: str) -> str | None:
        """The value of `tag`, or None when the pattern does not match it."""
        match = self.pattern.search(tag)
        if match is None:
            return None
        if self.template is None:
            return tag
        return "".join(
            part if isinstance(part, str) else (match.group(part) or "") for part in self.template
        )


def _compile(pattern: str, field: str) -> Any:
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise InvalidInputError(
            f"the pattern is {len(pattern)} characters, more than the {MAX_PATTERN_LENGTH} allowed",
            field=field,
        )
    options = re2.Options()
    options.log_errors = False  # the error is the caller's message, not a line on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as err:
        cause = err.args[0] if err.args else err
        text = cause.decode(errors="replace") if isinstance(cause, bytes) else str(cause)
        raise InvalidInputError(
            f"{pattern!r} is not a regular expression (RE2 syntax, as Flux): {text}", field=field
        ) from None


def _parse_template(template: str, pattern: Any, field: str) -> tuple[str | int, ...]:
    """`template` as literal text and group numbers; a reference the pattern lacks is an error,
    a `$` that starts no reference is literal text (as Go)."""
    if len(template) > MAX_PATTERN_LENGTH:
        raise InvalidInputError(
            f"the template is longer than {MAX_PATTERN_LENGTH} characters", field=field
        )
    parts: list[str | int] = []
    position = 0
    for reference in _TEMPLATE_REFERENCE.finditer(template):
        parts.append(template[position : reference.start()])
        position = reference.end()
        dollar, braced, bare = reference.groups()
        parts.append("$" if dollar else _group_number(braced or bare, pattern, field))
    parts.append(template[position:])
    return tuple(part for part in parts if part != "")


def _group_number(name: str, pattern: Any, field: str) -> int:
    number = int(name) if name.isdigit() else pattern.groupindex.get(name)
    if number is None or number > pattern.groups:
        names = ", ".join(f"${n}" for n in pattern.groupindex) or "none"
        raise InvalidInputError(
            f"${name} is not a group of filterTags.pattern (its named groups: {names})",
            field=field,
        )
    return number
