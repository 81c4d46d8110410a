"""SemVer 2 parsing and precedence, Helm's constraint syntax, and resolving ranges to versions."""

from __future__ import annotations

import itertools

import pytest

from bundler.core.versions import (
    SemVer,
    is_exact_version,
    parse_constraint,
    resolve_version,
    tag_to_version,
    version_to_tag,
)
from bundler.errors import InvalidInputError

V = SemVer.parse

PARSE_CASES = [
    ("full", "1.2.3", (1, 2, 3, (), "")),
    ("zeros", "0.0.0", (0, 0, 0, (), "")),
    ("v-prefix", "v1.2.3", (1, 2, 3, (), "")),
    ("partial-minor", "1.2", (1, 2, 0, (), "")),
    ("partial-major", "v7", (7, 0, 0, (), "")),
    ("prerelease", "1.2.3-alpha.1", (1, 2, 3, ("alpha", "1"), "")),
    ("prerelease-hyphens", "1.2.3-x-y--z", (1, 2, 3, ("x-y--z",), "")),
    ("build", "1.2.3+build.5", (1, 2, 3, (), "build.5")),
    ("build-leading-zero", "1.2.3+001", (1, 2, 3, (), "001")),
    ("prerelease-and-build", "1.2.3-rc.1+sha.abc", (1, 2, 3, ("rc", "1"), "sha.abc")),
    ("partial-with-prerelease", "1.2-beta", (1, 2, 0, ("beta",), "")),
    ("big-numbers", "2024.10.999999", (2024, 10, 999999, (), "")),
]


@pytest.mark.parametrize(
    ("text", "parts"), [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES]
)
def test_parse(text: str, parts: tuple[int, int, int, tuple[str, ...], str]) -> None:
    v = V(text)
    assert (v.major, v.minor, v.patch, v.prerelease, v.build) == parts
    assert str(v) == text


def test_constructed_version_prints_canonically() -> None:
    assert str(SemVer(1, 2, 3, ("rc", "1"), "b.7")) == "1.2.3-rc.1+b.7"
    assert str(SemVer(1, 0, 0)) == "1.0.0"


BAD_VERSIONS = [
    ("empty", ""),
    ("word", "latest"),
    ("four-parts", "1.2.3.4"),
    ("leading-zero-major", "01.2.3"),
    ("leading-zero-minor", "1.02.3"),
    ("leading-zero-numeric-prerelease", "1.2.3-01"),
    ("empty-prerelease", "1.2.3-"),
    ("empty-build", "1.2.3+"),
    ("empty-identifier", "1.2.3-a..b"),
    ("underscore-tag-form", "1.2.3_build"),
    ("uppercase-v", "V1.2.3"),
    ("leading-space", " 1.2.3"),
    ("trailing-newline", "1.2.3\n"),
    ("wildcard", "1.2.x"),
    ("range", ">=1.2.3"),
    ("negative", "-1.2.3"),
    ("absurdly-long", "1" * 5000 + ".0.0"),
]


@pytest.mark.parametrize("text", [c[1] for c in BAD_VERSIONS], ids=[c[0] for c in BAD_VERSIONS])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        SemVer.parse(text, field="spec.helm.version")
    assert info.value.field == "spec.helm.version"
    assert repr(text) in info.value.message
    assert "is not a SemVer version" in info.value.message


# SemVer 2, item 11: each is lower than the next.
PRECEDENCE_CHAIN = [
    "0.9.9",
    "1.0.0-0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.2.0",
    "1.10.0",
    "2.0.0",
    "10.0.0",
]


def test_precedence_chain_sorts() -> None:
    for shuffled in (PRECEDENCE_CHAIN[::-1], PRECEDENCE_CHAIN[1::2] + PRECEDENCE_CHAIN[::2]):
        assert [str(v) for v in sorted(V(t) for t in shuffled)] == PRECEDENCE_CHAIN


COMPARE_CASES = [
    ("numeric-prerelease-numerically", "1.0.0-2", "1.0.0-10", -1),
    ("numeric-before-alphanumeric", "1.0.0-99", "1.0.0-a", -1),
    ("ascii-uppercase-first", "1.0.0-BETA", "1.0.0-alpha", -1),
    ("longer-prerelease-higher", "1.0.0-a", "1.0.0-a.b", -1),
    ("prerelease-before-release", "1.0.0-rc.9", "1.0.0", -1),
    ("build-ignored", "1.0.0+a", "1.0.0+b", 0),
    ("build-vs-none", "1.0.0+a", "1.0.0", 0),
    ("v-prefix-ignored", "v1.0.0", "1.0.0", 0),
    ("partial-is-zero-filled", "1.2", "1.2.0", 0),
    ("numeric-major", "9.0.0", "10.0.0", -1),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), [c[1:] for c in COMPARE_CASES], ids=[c[0] for c in COMPARE_CASES]
)
def test_precedence(a: str, b: str, expected: int) -> None:
    va, vb = V(a), V(b)
    assert ((va > vb) - (va < vb)) == expected
    assert (va == vb) is (expected == 0)


def test_equal_precedence_hashes_alike_but_prints_as_written() -> None:
    versions = {V("1.2.3+a"), V("1.2.3+b"), V("v1.2.3")}
    assert len(versions) == 1
    assert {str(V("1.2.3+a")), str(V("v1.2.3"))} == {"1.2.3+a", "v1.2.3"}


EXACT_CASES = [
    ("plain", "1.2.3", True),
    ("v-prefix", "v1.2.3", True),
    ("prerelease-build", "1.2.3-rc.1+b", True),
    ("partial", "1.2", False),
    ("major-only", "1", False),
    ("wildcard", "1.2.x", False),
    ("star", "*", False),
    ("equals", "=1.2.3", False),
    ("range", ">=1.2.3", False),
    ("caret", "^1.2.3", False),
    ("tag-form", "1.2.3_b", False),
    ("leading-zero", "1.2.03", False),
    ("absurdly-long", "1.2." + "3" * 5000, False),
    ("empty", "", False),
]


@pytest.mark.parametrize(
    ("s", "expected"), [c[1:] for c in EXACT_CASES], ids=[c[0] for c in EXACT_CASES]
)
def test_is_exact_version(s: str, expected: bool) -> None:
    assert is_exact_version(s) is expected


TAG_CASES = [
    ("plain", "1.2.3", "1.2.3"),
    ("build", "1.2.3+build.5", "1.2.3_build.5"),
    ("prerelease-build", "0.1.0-rc.1+g1a2b", "0.1.0-rc.1_g1a2b"),
]


@pytest.mark.parametrize(
    ("version", "tag"), [c[1:] for c in TAG_CASES], ids=[c[0] for c in TAG_CASES]
)
def test_tags_write_plus_as_underscore(version: str, tag: str) -> None:
    assert version_to_tag(version) == tag
    assert tag_to_version(tag) == version


# (id, constraint, version, allowed)
ALLOWS_CASES = [
    # exact
    ("exact-equal", "1.2.3", "1.2.3", True),
    ("exact-other", "1.2.3", "1.2.4", False),
    ("exact-eq-op", "=1.2.3", "1.2.3", True),
    ("exact-v-prefix", "v1.2.3", "1.2.3", True),
    ("exact-build-ignored", "1.2.3", "1.2.3+build.1", True),
    ("exact-constraint-build-ignored", "1.2.3+a", "1.2.3+b", True),
    # a partial version is a prefix
    ("partial-inside", "1.2", "1.2.9", True),
    ("partial-above", "1.2", "1.3.0", False),
    ("partial-below", "1.2", "1.1.9", False),
    ("eq-major-inside", "=1", "1.9.0", True),
    ("eq-major-above", "=1", "2.0.0", False),
    # !=
    ("ne-other", "!=1.2.3", "1.2.4", True),
    ("ne-same", "!=1.2.3", "1.2.3", False),
    ("ne-partial-inside", "!=1.2", "1.2.5", False),
    ("ne-partial-outside", "!=1.2", "1.3.0", True),
    # comparisons
    ("gt-equal", ">1.2.3", "1.2.3", False),
    ("gt-above", ">1.2.3", "1.2.4", True),
    ("gt-build-equal", ">1.2.3", "1.2.3+z", False),
    ("ge-equal", ">=1.2.3", "1.2.3", True),
    ("ge-below", ">=1.2.3", "1.2.2", False),
    ("ge-alias", "=>1.2", "1.2.0", True),
    ("lt-below", "<1.2.3", "1.2.2", True),
    ("lt-equal", "<1.2.3", "1.2.3", False),
    ("le-equal", "<=1.2.3", "1.2.3", True),
    ("le-above", "<=1.2.3", "1.2.4", False),
    ("le-alias-partial-inside", "=<1.2", "1.2.9", True),
    ("le-alias-partial-above", "=<1.2", "1.3.0", False),
    ("gt-partial-inside", ">1.2", "1.2.9", False),
    ("gt-partial-next", ">1.2", "1.3.0", True),
    ("gt-major-inside", ">1", "1.9.0", False),
    ("gt-major-next", ">1", "2.0.0", True),
    ("le-wildcard-inside", "<=2.x", "2.9.9", True),
    ("le-wildcard-above", "<=2.x", "3.0.0", False),
    ("lt-wildcard", "<1.x", "0.9.9", True),
    ("lt-wildcard-floor", "<1.x", "1.0.0", False),
    ("ge-wildcard", ">=1.2.x", "1.2.0", True),
    ("ge-wildcard-below", ">=1.2.x", "1.1.9", False),
    ("gt-star-nothing", ">*", "1.0.0", False),
    ("le-star-everything", "<=*", "9.0.0", True),
    # AND: spaces, commas, spaced operators
    ("and-inside", ">=1.0 <2.0", "1.5.0", True),
    ("and-upper", ">=1.0 <2.0", "2.0.0", False),
    ("and-lower", ">=1.0 <2.0", "0.9.0", False),
    ("and-comma", ">=1.0,<2.0", "1.5.0", True),
    ("and-comma-spaced", ">= 1.0 , < 2.0", "2.0.0", False),
    # OR
    ("or-first", "<1.0 || >=2.0", "0.5.0", True),
    ("or-neither", "<1.0 || >=2.0", "1.5.0", False),
    ("or-second", "<1.0 || >=2.0", "2.5.0", True),
    ("or-readme-gap", ">= 1.2 < 3.0.0 || >= 4.2.3", "3.5.0", False),
    ("or-readme-second", ">= 1.2 < 3.0.0 || >= 4.2.3", "4.2.3", True),
    ("or-no-spaces", "1.0.0||2.0.0", "2.0.0", True),
    # hyphen ranges
    ("hyphen-lower", "1.2 - 1.4.5", "1.2.0", True),
    ("hyphen-upper", "1.2 - 1.4.5", "1.4.5", True),
    ("hyphen-above", "1.2 - 1.4.5", "1.4.6", False),
    ("hyphen-below", "1.2 - 1.4.5", "1.1.9", False),
    ("hyphen-partial-upper-inside", "2.3.4 - 4.5", "4.5.9", True),
    ("hyphen-partial-upper-above", "2.3.4 - 4.5", "4.6.0", False),
    ("hyphen-and-comparator", "1.0 - 2.0 !=1.5.0", "1.5.0", False),
    # tilde
    ("tilde-patch-floor", "~1.2.3", "1.2.3", True),
    ("tilde-patch-inside", "~1.2.3", "1.2.9", True),
    ("tilde-patch-next-minor", "~1.2.3", "1.3.0", False),
    ("tilde-patch-below", "~1.2.3", "1.2.2", False),
    ("tilde-minor-inside", "~1.2", "1.2.0", True),
    ("tilde-minor-next", "~1.2", "1.3.0", False),
    ("tilde-major-inside", "~1", "1.9.9", True),
    ("tilde-major-next", "~1", "2.0.0", False),
    ("tilde-major-wildcard", "~1.x", "1.5.0", True),
    ("tilde-minor-wildcard", "~1.2.x", "1.2.7", True),
    ("tilde-minor-wildcard-next", "~1.2.x", "1.3.0", False),
    ("tilde-arrow", "~>1.2", "1.2.5", True),
    ("tilde-star", "~*", "3.0.0", True),
    # caret
    ("caret-floor", "^1.2.3", "1.2.3", True),
    ("caret-minor-up", "^1.2.3", "1.9.0", True),
    ("caret-next-major", "^1.2.3", "2.0.0", False),
    ("caret-below", "^1.2.3", "1.2.2", False),
    ("caret-zero-minor-inside", "^0.2.3", "0.2.9", True),
    ("caret-zero-minor-next", "^0.2.3", "0.3.0", False),
    ("caret-zero-minor-below", "^0.2.3", "0.2.2", False),
    ("caret-zero-zero-patch", "^0.0.3", "0.0.3", True),
    ("caret-zero-zero-patch-next", "^0.0.3", "0.0.4", False),
    ("caret-zero-zero", "^0.0", "0.0.9", True),
    ("caret-zero-zero-next", "^0.0", "0.1.0", False),
    ("caret-zero", "^0", "0.9.0", True),
    ("caret-zero-next", "^0", "1.0.0", False),
    ("caret-zero-minor-partial", "^0.2", "0.2.5", True),
    ("caret-zero-minor-partial-next", "^0.2", "0.3.0", False),
    ("caret-minor-wildcard", "^1.2.x", "1.9.0", True),
    ("caret-minor-wildcard-next", "^1.2.x", "2.0.0", False),
    ("caret-major-wildcard", "^2.x", "2.0.0", True),
    ("caret-major-wildcard-next", "^2.x", "3.0.0", False),
    ("caret-v-prefix", "^v1.2", "1.5.0", True),
    # wildcards
    ("x-major-floor", "1.x", "1.0.0", True),
    ("x-major-inside", "1.x", "1.9.9", True),
    ("x-major-next", "1.x", "2.0.0", False),
    ("x-major-below", "1.x", "0.9.9", False),
    ("uppercase-x", "1.X", "1.4.0", True),
    ("star-minor", "1.2.*", "1.2.9", True),
    ("star-minor-next", "1.2.*", "1.3.0", False),
    ("star-design-example", "6.*", "6.1.2", True),
    ("star-design-next", "6.*", "7.0.0", False),
    ("star-all-low", "*", "0.0.1", True),
    ("star-all-high", "*", "99.0.0", True),
    ("x-all", "x", "1.0.0", True),
    ("empty-is-star", "", "1.0.0", True),
    ("blank-is-star", "  ", "1.0.0", True),
    # prereleases are skipped unless the alternative asks for one
    ("pre-star", "*", "1.0.0-rc.1", False),
    ("pre-ge", ">=1.0.0", "1.1.0-beta", False),
    ("pre-tilde", "~1.2", "1.2.5-beta", False),
    ("pre-lt-without-pre", "<2.0.0", "2.0.0-rc.1", False),
    ("pre-opt-in-zero", ">=1.0.0-0", "1.1.0-beta", True),
    ("pre-opt-in-floor", ">=1.2.3-0", "1.2.3-alpha", True),
    ("pre-below-floor", ">=1.2.3-beta", "1.2.3-alpha", False),
    ("pre-ascii-order", ">=1.2.3-BETA", "1.2.3-alpha", True),
    ("pre-exact", "1.2.3-rc.1", "1.2.3-rc.1", True),
    ("pre-exact-other", "1.2.3-rc.1", "1.2.3-rc.2", False),
    ("pre-caret-above", "^1.2.3-beta.2", "1.2.3-beta.3", True),
    ("pre-caret-below", "^1.2.3-beta.2", "1.2.3-beta.1", False),
    ("pre-caret-other-minor", "^1.2.3-beta.2", "1.3.0-alpha", True),
    ("pre-caret-release", "^1.2.3-beta.2", "1.2.3", True),
    ("pre-tilde-stays-in-prefix", "~1.2.3-0", "1.3.0-alpha", False),
    ("pre-and-upper", ">=1.0.0-0 <2.0.0", "2.0.0-rc.1", True),
    ("pre-per-alternative-no", ">=1.0.0-0 <1.1 || ^2", "2.1.0-beta", False),
    ("pre-per-alternative-yes", ">=1.0.0-0 <1.1 || ^2", "1.0.5-beta", True),
]


@pytest.mark.parametrize(
    ("constraint", "version", "allowed"),
    [c[1:] for c in ALLOWS_CASES],
    ids=[c[0] for c in ALLOWS_CASES],
)
def test_constraint_allows(constraint: str, version: str, allowed: bool) -> None:
    assert parse_constraint(constraint).allows(V(version)) is allowed


def test_constraint_prints_as_written() -> None:
    assert str(parse_constraint(">= 1.0 , < 2.0")) == ">= 1.0 , < 2.0"


BAD_CONSTRAINTS = [
    ("word", "latest", "expected a version at 'latest'"),
    ("operator-only", ">=", "expected a version at '>='"),
    ("tilde-only", "~", "expected a version at '~'"),
    ("trailing-or", "1.0 ||", "empty alternative"),
    ("leading-or", "|| 1.0", "empty alternative"),
    ("empty-middle-alternative", "1.0 || || 2.0", "empty alternative"),
    ("trailing-comma", ">=1.0,", "expected a version at the end"),
    ("dangling-hyphen", "1.0 -", "expected a version at '-'"),
    ("four-parts", "1.2.3.4", "'1.2.3.4' is not a version"),
    ("leading-zero", "01.2.3", "'01.2.3' is not a version"),
    ("prerelease-leading-zero", ">=1.2.3-01", "'1.2.3-01' is not a version"),
    ("number-after-wildcard", "1.x.3", "a wildcard can only be followed by wildcards"),
    ("double-operator", ">>1.0", "expected a version at '>>1.0'"),
    ("mixed-operators", "=>=1", "expected a version at '=>=1'"),
    ("no-separator", "1.0<2.0", "expected ',' or a space before '<2.0'"),
    ("tag-form", "1.2.3_build", "expected ',' or a space before '_build'"),
    ("words-in-or", "a||b", "expected a version at 'a'"),
    ("single-pipe", "1.0 | 2.0", "expected a version at '| 2.0'"),
    ("absurdly-long", ">=" + "9" * 5000, "is not a version"),
]


@pytest.mark.parametrize(
    ("text", "cause"), [c[1:] for c in BAD_CONSTRAINTS], ids=[c[0] for c in BAD_CONSTRAINTS]
)
def test_parse_constraint_rejects_garbage(text: str, cause: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_constraint(text, field="spec.helm.version")
    assert info.value.field == "spec.helm.version"
    assert info.value.message.startswith(f"invalid version constraint {text!r}: ")
    assert cause in info.value.message


REGISTRY = ["0.9.0", "1.0.0", "1.2.0", "1.2.5", "1.3.0-beta.1", "1.3.0", "2.0.0", "2.1.0-rc.1"]

# (id, constraint, available, resolved)
RESOLVE_CASES = [
    ("highest-in-range", ">=1.0 <2.0", REGISTRY, "1.3.0"),
    ("tilde", "~1.2", REGISTRY, "1.2.5"),
    ("caret", "^1.2.3", REGISTRY, "1.3.0"),
    ("star-skips-prereleases", "*", REGISTRY, "2.0.0"),
    ("empty-means-latest-release", "", REGISTRY, "2.0.0"),
    ("prerelease-opt-in", ">=2.0.0-0", REGISTRY, "2.1.0-rc.1"),
    ("exact", "1.2.0", REGISTRY, "1.2.0"),
    ("exact-prerelease", "1.3.0-beta.1", REGISTRY, "1.3.0-beta.1"),
    ("nothing-satisfies", ">=3", REGISTRY, None),
    ("nothing-available", "*", [], None),
    ("only-prereleases", "*", ["1.0.0-rc.1", "1.0.0-rc.2"], None),
    (
        "non-semver-tags-ignored",
        "*",
        ["latest", "main", "sha-1a2b3c", "1.0.0", "2.0", "1.5", "9" * 5000],
        "2.0",
    ),
    ("v-prefixed-tags", "^1", ["v1.0.0", "v1.2.0", "v2.0.0"], "v1.2.0"),
    ("underscore-tags", "6.*", ["6.1.2_build.5", "6.0.0", "7.0.0"], "6.1.2+build.5"),
    ("equal-precedence-greatest-text", "1.0.0", ["1.0.0_b.2", "1.0.0_b.1"], "1.0.0+b.2"),
    ("exact-text-wins", "1.0.0+b.1", ["1.0.0_b.2", "1.0.0_b.1"], "1.0.0+b.1"),
    ("exact-text-wins-plus", "1.0.0+b.1", ["1.0.0+b.2", "1.0.0+b.1"], "1.0.0+b.1"),
    ("build-only-match", "1.0.0", ["1.0.0_ci.7"], "1.0.0+ci.7"),
]


@pytest.mark.parametrize(
    ("constraint", "available", "resolved"),
    [c[1:] for c in RESOLVE_CASES],
    ids=[c[0] for c in RESOLVE_CASES],
)
def test_resolve_version(constraint: str, available: list[str], resolved: str | None) -> None:
    assert resolve_version(constraint, available) == resolved
    assert resolve_version(constraint, reversed(available)) == resolved


def test_resolve_version_does_not_depend_on_order() -> None:
    available = ["1.0.0+a", "v1.0.0", "1.0.0", "1.0.0_c", "0.9.0"]
    answers = {resolve_version("^1", p) for p in itertools.permutations(available)}
    assert answers == {"v1.0.0"}


def test_resolved_version_maps_back_to_its_tag() -> None:
    tags = ["6.1.2_build.5", "6.0.0"]
    resolved = resolve_version("6.*", tags)
    assert resolved is not None
    assert version_to_tag(resolved) in tags


def test_resolve_version_rejects_a_bad_constraint() -> None:
    with pytest.raises(InvalidInputError, match=r"spec\.helm\.version: invalid version constraint"):
        resolve_version("newest", ["1.0.0"], field="spec.helm.version")
