"""Chart versions: SemVer 2 values, Helm's version constraints and resolving a range to a version.

Versions are SemVer 2 read the way Helm reads chart versions: a leading `v` is accepted and a
missing minor or patch counts as 0 (`v1.2` is 1.2.0). Equality and ordering are SemVer precedence:
build metadata and the spelling do not count (`1.2.3+a == v1.2.3`), while `str()` gives the text
back as written.

Constraints follow Masterminds semver v3, which Helm uses:
- `||` separates alternatives; inside one, comparators separated by spaces or commas must all hold.
- `=`/none, `!=`, `>`, `>=`, `<`, `<=` (also `=>`, `=<`); `~` (`~>`) and `^`; hyphen ranges
  `1.2 - 1.4.5` (spaces around `-` required: `1.2-1.4.5` is version 1.2.0 with prerelease 1.4.5).
- A missing or wildcard (`x`, `X`, `*`) part makes a prefix: `1.2`, `1.2.x` and `=1.2` all mean
  `>=1.2.0 <1.3.0`; `>1.2` means `>=1.3.0`; `<=1.2` means `<1.3.0`; `*` means any release.
- `~1.2.3` is `>=1.2.3 <1.3.0`, `~1` is `>=1.0.0 <2.0.0`; `^1.2.3` is `>=1.2.3 <2.0.0`,
  `^0.2.3` is `>=0.2.3 <0.3.0`, `^0.0.3` is `>=0.0.3 <0.0.4`, `^0` is `<1.0.0`.
- Prereleases: a prerelease version satisfies an alternative only when some comparator of that
  alternative itself has a prerelease (`>=1.0.0-0`); otherwise prereleases are skipped.
- The empty constraint means `*` (Helm's "latest release" for an unset version).
Masterminds' corner cases for an operator in front of a bare `*` and for `~0.0.0` are read as plain
ranges here (`>*` matches nothing, `<=*` and `^*` everything, `~0.0.0` is `<0.1.0`).

OCI tags cannot hold `+`, so Helm writes it as `_`; `tag_to_version`/`version_to_tag` convert.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from bundler.errors import InvalidInputError

_NUMBER = r"0|[1-9][0-9]*"
_DOTTED = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_VERSION_RE = re.compile(
    rf"v?({_NUMBER})(?:\.({_NUMBER}))?(?:\.({_NUMBER}))?(?:-({_DOTTED}))?(?:\+({_DOTTED}))?"
)
_PART = rf"{_NUMBER}|[xX*]"
_PARTIAL_RE = re.compile(
    rf"v?({_PART})(?:\.({_PART}))?(?:\.({_PART}))?(?:-({_DOTTED}))?(?:\+({_DOTTED}))?"
)
_VERSION_FORM = "MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]"
# OCI tags stop at 128 characters; the cap also keeps int() within Python's digit limit.
_MAX_VERSION_LENGTH = 256

# Identifiers sort numerically before alphanumerically (SemVer 2, item 11.4).
_IdentifierKey = tuple[int, int, str]
_Precedence = tuple[int, int, int, int, tuple[_IdentifierKey, ...]]


@dataclass(frozen=True, order=True)
class SemVer:
    """A SemVer 2 version; compares by precedence, prints as written."""

    _precedence: _Precedence = dataclasses.field(init=False, repr=False)
    major: int = dataclasses.field(compare=False)
    minor: int = dataclasses.field(compare=False)
    patch: int = dataclasses.field(compare=False)
    prerelease: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    build: str = dataclasses.field(default="", compare=False)
    text: str = dataclasses.field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        # A release sorts after every prerelease of the same MAJOR.MINOR.PATCH.
        release = 0 if self.prerelease else 1
        ids = tuple(_identifier_key(i) for i in self.prerelease)
        key = (self.major, self.minor, self.patch, release, ids)
        object.__setattr__(self, "_precedence", key)

    @classmethod
    def parse(cls, s: str, *, field: str | None = None) -> SemVer:
        """Parse `s`; raise InvalidInputError naming the text and the expected form."""
        version = _match_version(s)
        if version is None:
            raise InvalidInputError(f"{s!r} is not a SemVer version ({_VERSION_FORM})", field=field)
        return version

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def __str__(self) -> str:
        return self.text or self._canonical()

    def _canonical(self) -> str:
        pre = f"-{'.'.join(self.prerelease)}" if self.prerelease else ""
        build = f"+{self.build}" if self.build else ""
        return f"{self.major}.{self.minor}.{self.patch}{pre}{build}"


def _identifier_key(identifier: str) -> _IdentifierKey:
    return (0, int(identifier), "") if identifier.isdigit() else (1, 0, identifier)


def _split_prerelease(text: str | None) -> tuple[str, ...] | None:
    """The identifiers of a prerelease, or None when a numeric one has a leading zero."""
    ids = tuple(text.split(".")) if text else ()
    if any(i.isdigit() and len(i) > 1 and i.startswith("0") for i in ids):
        return None
    return ids


def _match_version(s: str) -> SemVer | None:
    m = _VERSION_RE.fullmatch(s) if len(s) <= _MAX_VERSION_LENGTH else None
    prerelease = _split_prerelease(m[4]) if m else None
    if m is None or prerelease is None:
        return None
    return SemVer(int(m[1]), int(m[2] or 0), int(m[3] or 0), prerelease, m[5] or "", s)


def is_version(s: str) -> bool:
    """A version as Helm reads a chart's: `1.2.3`, `v1.2.3`, a partial `1.2`, with an optional
    prerelease and build metadata. Not a range."""
    return _match_version(s) is not None


def is_exact_version(s: str) -> bool:
    """A plain, complete version (`1.2.3`, `v1.2.3-rc.1+b`): not a range, not a partial `1.2`.

    Partial versions are excluded because in a constraint `1.2` means any 1.2.x.
    """
    m = _VERSION_RE.fullmatch(s) if len(s) <= _MAX_VERSION_LENGTH else None
    return m is not None and m[3] is not None and _split_prerelease(m[4]) is not None


# What a chart without a version means, as in Fleet and Helm: the latest stable release, that is
# the range every stable version satisfies.
LATEST_STABLE = "*"


def wanted_version(version: str | None) -> str:
    """The version or range a `spec.helm.version` asks for: unset means LATEST_STABLE."""
    return LATEST_STABLE if version is None else version


def tag_to_version(tag: str) -> str:
    """An OCI tag back to the chart version: `_` stands for `+`."""
    return tag.replace("_", "+")


def version_to_tag(version: str) -> str:
    """A chart version as an OCI tag, which cannot hold `+` (Helm writes `_`)."""
    return version.replace("+", "_")


class Operator(Enum):
    EQ = "="
    NE = "!="
    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="
    TILDE = "~"
    CARET = "^"


_OPERATORS = {
    "": Operator.EQ,
    "=": Operator.EQ,
    "!=": Operator.NE,
    ">": Operator.GT,
    ">=": Operator.GE,
    "=>": Operator.GE,
    "<": Operator.LT,
    "<=": Operator.LE,
    "=<": Operator.LE,
    "~": Operator.TILDE,
    "~>": Operator.TILDE,
    "^": Operator.CARET,
}
# Tokens are cut loosely here and validated by _parse_partial, which gives the precise cause.
_VERSIONISH = r"v?[0-9xX*][0-9A-Za-z.+*-]*"
_OPS = r">=|=>|<=|=<|!=|~>|[=<>~^]"
_HYPHEN_RANGE_RE = re.compile(rf"({_VERSIONISH})\s+-\s+({_VERSIONISH})")
_COMPARATOR_RE = re.compile(rf"({_OPS})?\s*({_VERSIONISH})")
_SEPARATOR_RE = re.compile(r"\s*,\s*|\s+")


class _ConstraintSyntaxError(Exception):
    """Why a constraint does not parse; parse_constraint adds the constraint and the field."""


@dataclass(frozen=True)
class _Partial:
    """A version in a constraint: its concrete leading parts (0 to 3) and its prerelease."""

    parts: tuple[int, ...]
    prerelease: tuple[str, ...]

    @property
    def floor(self) -> SemVer:
        major, minor, patch = (*self.parts, 0, 0, 0)[:3]
        return SemVer(major, minor, patch, self.prerelease)


@dataclass(frozen=True)
class _Bound:
    version: SemVer
    inclusive: bool


@dataclass(frozen=True)
class _Interval:
    """Versions between the bounds (unbounded where None); `negated` takes the complement."""

    lower: _Bound | None = None
    upper: _Bound | None = None
    negated: bool = False

    def contains(self, v: SemVer) -> bool:
        above = (
            self.lower is None
            or v > self.lower.version
            or (self.lower.inclusive and v == self.lower.version)
        )
        below = (
            self.upper is None
            or v < self.upper.version
            or (self.upper.inclusive and v == self.upper.version)
        )
        return (above and below) != self.negated


_EVERYTHING = _Interval()
_NOTHING = _Interval(negated=True)


@dataclass(frozen=True)
class _Alternative:
    """One `||` alternative: every interval must hold."""

    intervals: tuple[_Interval, ...]
    allows_prereleases: bool

    def allows(self, v: SemVer) -> bool:
        if v.is_prerelease and not self.allows_prereleases:
            return False
        return all(i.contains(v) for i in self.intervals)


@dataclass(frozen=True)
class Constraint:
    """A parsed version constraint; `str()` gives the text as written."""

    text: str
    alternatives: tuple[_Alternative, ...]

    def allows(self, v: SemVer) -> bool:
        return any(a.allows(v) for a in self.alternatives)

    def __str__(self) -> str:
        return self.text


def parse_constraint(s: str, *, field: str | None = None) -> Constraint:
    """Parse Helm's constraint syntax; InvalidInputError names the constraint and the cause."""
    if not s.strip():
        return Constraint(s, (_Alternative((), allows_prereleases=False),))
    try:
        return Constraint(s, tuple(_parse_alternative(a) for a in s.split("||")))
    except _ConstraintSyntaxError as problem:
        raise InvalidInputError(
            f"invalid version constraint {s!r}: {problem}", field=field
        ) from None


def _parse_alternative(text: str) -> _Alternative:
    text = text.strip()
    if not text:
        raise _ConstraintSyntaxError("empty alternative next to '||'")
    partials: list[tuple[Operator, _Partial]] = []
    pos = 0
    while True:
        if m := _HYPHEN_RANGE_RE.match(text, pos):
            partials += [(Operator.GE, _parse_partial(m[1])), (Operator.LE, _parse_partial(m[2]))]
        elif m := _COMPARATOR_RE.match(text, pos):
            partials.append((_OPERATORS[m[1] or ""], _parse_partial(m[2])))
        else:
            rest = text[pos:]
            raise _ConstraintSyntaxError(
                f"expected a version at {rest!r}" if rest else "expected a version at the end"
            )
        pos = m.end()
        if pos == len(text):
            break
        separator = _SEPARATOR_RE.match(text, pos)
        if separator is None:
            raise _ConstraintSyntaxError(f"expected ',' or a space before {text[pos:]!r}")
        pos = separator.end()
    return _Alternative(
        tuple(_interval(op, p) for op, p in partials),
        allows_prereleases=any(p.prerelease for _, p in partials),
    )


def _parse_partial(text: str) -> _Partial:
    m = _PARTIAL_RE.fullmatch(text) if len(text) <= _MAX_VERSION_LENGTH else None
    prerelease = _split_prerelease(m[4]) if m else None
    if m is None or prerelease is None:
        raise _ConstraintSyntaxError(
            f"{text!r} is not a version ({_VERSION_FORM}, parts may be x or *)"
        )
    concrete: list[int] = []
    wildcard_seen = False
    for part in (p for p in (m[1], m[2], m[3]) if p is not None):
        if not part.isdigit():
            wildcard_seen = True
        elif wildcard_seen:
            raise _ConstraintSyntaxError(f"{text!r}: a wildcard can only be followed by wildcards")
        else:
            concrete.append(int(part))
    return _Partial(tuple(concrete), prerelease)


def _interval(op: Operator, partial: _Partial) -> _Interval:
    """The versions one comparator admits (before the prerelease rule)."""
    base, parts = partial.floor, partial.parts
    exact = len(parts) == 3
    match op:
        case Operator.EQ:
            return (
                _Interval(_Bound(base, True), _Bound(base, True)) if exact else _prefix(base, parts)
            )
        case Operator.NE:
            return dataclasses.replace(_interval(Operator.EQ, partial), negated=True)
        case Operator.GE:
            return _Interval(lower=_Bound(base, True))
        case Operator.LT:
            return _Interval(upper=_Bound(base, False))
        case Operator.GT:
            if exact:
                return _Interval(lower=_Bound(base, False))
            return _Interval(lower=_Bound(_next_prefix(parts), True)) if parts else _NOTHING
        case Operator.LE:
            if exact:
                return _Interval(upper=_Bound(base, True))
            return _Interval(upper=_Bound(_next_prefix(parts), False)) if parts else _EVERYTHING
        case Operator.TILDE:
            return _prefix(base, parts[:2])
        case Operator.CARET:
            return _prefix(base, _caret_prefix(parts))


def _caret_prefix(parts: tuple[int, ...]) -> tuple[int, ...]:
    """The parts `^` keeps fixed: up to the first non-zero one, or all given when all are zero."""
    for i, part in enumerate(parts):
        if part != 0:
            return parts[: i + 1]
    return parts


def _prefix(base: SemVer, prefix: tuple[int, ...]) -> _Interval:
    """From `base` up to every version starting with `prefix`; no prefix means everything."""
    if not prefix:
        return _EVERYTHING
    return _Interval(_Bound(base, True), _Bound(_next_prefix(prefix), False))


def _next_prefix(parts: tuple[int, ...]) -> SemVer:
    """The lowest version after every version starting with `parts`: the `-0` of the next one."""
    bumped = (*parts[:-1], parts[-1] + 1, 0, 0)
    return SemVer(bumped[0], bumped[1], bumped[2], ("0",))


def resolve_version(
    constraint: str, available: Iterable[str], *, field: str | None = None
) -> str | None:
    """The highest of `available` that satisfies `constraint`, or None.

    `available` may be repository versions or OCI tags: `_` is read as `+`, and the result is the
    version (with `+`; `version_to_tag` gives the tag back). Entries that are not SemVer (`latest`)
    are skipped. As in Helm, an entry equal to the constraint text wins outright; among entries of
    equal precedence (`1.0.0+a`, `1.0.0+b`) the greatest text wins, so the answer never depends on
    the order of `available`.
    """
    wanted = parse_constraint(constraint, field=field)
    candidates = [tag_to_version(entry) for entry in available]
    if constraint and constraint in candidates:
        return constraint
    ranked = allowed_newest_first(wanted, candidates)
    return ranked[0] if ranked else None


def allowed_newest_first(wanted: Constraint, texts: Iterable[str]) -> list[str]:
    """The entries of `texts` that are SemVer versions `wanted` allows, highest precedence first,
    each once; among equal precedence (`1.0.0+a`, `v1.0.0`) the greatest text comes first, so the
    order never depends on the order of `texts`. Entries that are not SemVer are skipped."""
    allowed: dict[str, SemVer] = {}
    for text in texts:
        version = _match_version(text)
        if version is not None and wanted.allows(version):
            allowed[text] = version
    return sorted(allowed, key=lambda text: (allowed[text], text), reverse=True)
