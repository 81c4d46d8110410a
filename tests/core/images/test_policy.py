"""Choosing an image tag: Flux's ImagePolicy semantics, ignoreTags and filterTags, the errors."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bundler.api.images import BundleImage
from bundler.core.images import check_policy, choose_tag, ranked_tags
from bundler.errors import InvalidInputError

REPOSITORY = "registry.example:5000/team/web"


def image(policy: dict[str, Any], **fields: Any) -> BundleImage:
    return BundleImage.model_validate(
        {"name": "web", "repository": REPOSITORY, "policy": policy, **fields}
    )


def semver(range_: str) -> dict[str, Any]:
    return {"semver": {"range": range_}}


def alphabetical(order: str = "asc") -> dict[str, Any]:
    return {"alphabetical": {"order": order}}


def numerical(order: str = "asc") -> dict[str, Any]:
    return {"numerical": {"order": order}}


RELEASES = ["1.0.0", "1.2.0", "1.10.0", "2.0.0-rc.1", "2.0.0-rc.2", "latest", "sha-abc"]

CHOOSE_CASES: list[tuple[str, BundleImage, list[str], str]] = [
    ("semver-highest-release", image(semver(">=1.0.0")), RELEASES, "1.10.0"),
    ("semver-caret", image(semver("^1.2")), RELEASES, "1.10.0"),
    ("semver-tilde", image(semver("~1.2")), RELEASES, "1.2.0"),
    ("semver-prerelease-named", image(semver(">=2.0.0-0")), RELEASES, "2.0.0-rc.2"),
    (
        "semver-release-beats-its-prereleases",
        image(semver(">=2.0.0-0")),
        [*RELEASES, "2.0.0"],
        "2.0.0",
    ),
    ("semver-prerelease-skipped-unnamed", image(semver(">=1.5.0")), RELEASES, "1.10.0"),
    ("semver-v-prefix", image(semver("<2")), ["v1.1.0", "1.0.0", "v0.9"], "v1.1.0"),
    ("semver-partial-tag", image(semver("1.x")), ["1", "1.3", "2"], "1.3"),
    ("semver-same-version-greatest-text", image(semver("1.0.0")), ["1.0.0", "v1.0.0"], "v1.0.0"),
    (
        "alphabetical-asc",
        image(alphabetical()),
        ["2024-01-02", "2024-01-10", "2023-12-31"],
        "2024-01-10",
    ),
    ("alphabetical-desc", image(alphabetical("desc")), ["b", "a", "c"], "a"),
    ("alphabetical-default-order", image({"alphabetical": {}}), ["b", "a", "c"], "c"),
    ("numerical-asc", image(numerical()), ["9", "10", "100", "latest", "1e1"], "100"),
    ("numerical-desc", image(numerical("desc")), ["9", "10", "-1", "latest"], "-1"),
    ("numerical-decimals", image(numerical()), ["1.5", "1.25", "1.125"], "1.5"),
    ("numerical-skips-non-numbers", image(numerical()), ["0x10", "inf", "nan", "3"], "3"),
    (
        "numerical-big-timestamps-exact",
        image(numerical()),
        ["17103000000000000001", "17103000000000000002"],
        "17103000000000000002",
    ),
    (
        "ignore-tags-glob",
        image(semver(">=1.0.0-0"), ignoreTags=["*-dev", "*-rc.*"]),
        ["1.0.0", "1.1.0-dev", "1.1.0-rc.1"],
        "1.0.0",
    ),
    (
        "ignore-tags-whole-tag-case-sensitive",
        image(alphabetical(), ignoreTags=["Z*"]),
        ["a", "z-last", "Zed"],
        "z-last",
    ),
    (
        "filter-extract-numerical",
        image(
            numerical(),
            filterTags={"pattern": r"^main-[a-f0-9]+-(?P<ts>[0-9]+)$", "extract": "$ts"},
        ),
        ["main-abc1234-99", "main-def5678-100", "feature-1-9999", "main-xyz-1000"],
        "main-def5678-100",
    ),
    (
        "filter-extract-semver",
        image(semver("^1"), filterTags={"pattern": r"^web-(?P<v>.*)$", "extract": "${v}"}),
        ["web-1.2.0", "web-1.3.0", "api-1.9.0"],
        "web-1.3.0",
    ),
    (
        "filter-go-named-group",
        image(alphabetical(), filterTags={"pattern": r"^rel-(?<d>\d+)", "extract": "$d"}),
        ["rel-1-x", "rel-2-y", "other-9"],
        "rel-2-y",
    ),
    (
        "filter-unanchored-pattern",
        image(alphabetical(), filterTags={"pattern": "stable"}),
        ["a-stable-1", "b-unstable", "c-edge"],
        "b-unstable",
    ),
    (
        "filter-extract-numbered-and-literal",
        image(alphabetical(), filterTags={"pattern": r"(\d+)-(\d+)", "extract": "$2.$1$$"}),
        ["1-9", "2-3"],
        "1-9",
    ),
    (
        "filter-without-extract-orders-tags",
        image(semver("*"), filterTags={"pattern": "^v"}),
        ["v1.0.0", "2.0.0"],
        "v1.0.0",
    ),
    (
        # Exponential for a backtracking engine (2^128 paths); RE2 answers at once.
        "pathological-pattern-is-linear",
        image(alphabetical(), filterTags={"pattern": "^(a|a)*$"}),
        ["a" * 127 + "b", "a" * 128, "aa"],
        "a" * 128,
    ),
    ("tags-over-128-characters-skipped", image(alphabetical()), ["a", "z" * 129], "a"),
    ("order-independent", image(alphabetical()), list(reversed(["a", "b", "c"])), "c"),
]


@pytest.mark.parametrize(
    ("chosen_image", "tags", "expected"),
    [c[1:] for c in CHOOSE_CASES],
    ids=[c[0] for c in CHOOSE_CASES],
)
def test_choose_tag(chosen_image: BundleImage, tags: list[str], expected: str) -> None:
    assert choose_tag(chosen_image, tags) == expected
    assert choose_tag(chosen_image, list(reversed(tags))) == expected


RANK_CASES: list[tuple[str, BundleImage, list[str], list[str]]] = [
    ("semver", image(semver(">=1")), ["1.0.0", "2.0.0", "x", "1.5.0"], ["2.0.0", "1.5.0", "1.0.0"]),
    ("alphabetical-desc", image(alphabetical("desc")), ["b", "a", "c"], ["a", "b", "c"]),
    ("numerical-asc-duplicates", image(numerical()), ["2", "10", "2", "x"], ["10", "2"]),
    (
        "same-extract-greatest-tag-first",
        image(numerical("desc"), filterTags={"pattern": r"-(?P<n>\d+)$", "extract": "$n"}),
        ["a-1", "b-1", "c-0"],
        ["c-0", "b-1", "a-1"],
    ),
    ("none", image(semver(">=9")), ["1.0.0"], []),
]


@pytest.mark.parametrize(
    ("ranked_image", "tags", "expected"),
    [c[1:] for c in RANK_CASES],
    ids=[c[0] for c in RANK_CASES],
)
def test_ranked_tags(ranked_image: BundleImage, tags: list[str], expected: list[str]) -> None:
    assert ranked_tags(ranked_image, tags) == expected


ERROR_CASES: list[tuple[str, BundleImage, list[str], list[str]]] = [
    (
        "no-semver-match",
        image(semver(">=3")),
        RELEASES,
        [
            "spec.images[web]",
            REPOSITORY,
            "semver range '>=3'",
            "7 tags seen",
            "prereleases match only a range that names one",
        ],
    ),
    ("empty-repository", image(numerical()), [], ["numerical (asc)", "0 tags seen"]),
    (
        "all-filtered",
        image(alphabetical("desc"), ignoreTags=["*"]),
        ["a", "b"],
        ["alphabetical (desc)", "2 tags seen, 0 left after ignoreTags and filterTags"],
    ),
    (
        "bad-pattern",
        image(alphabetical(), filterTags={"pattern": "(unclosed"}),
        ["a"],
        ["spec.images[web].filterTags.pattern", "is not a regular expression"],
    ),
    (
        "pattern-too-long",
        image(alphabetical(), filterTags={"pattern": "a" * 257}),
        ["a"],
        ["spec.images[web].filterTags.pattern", "more than the 256 allowed"],
    ),
    (
        "extract-unknown-group",
        image(alphabetical(), filterTags={"pattern": "(?P<a>x)", "extract": "$b"}),
        ["x"],
        ["spec.images[web].filterTags.extract", "$b is not a group", "$a"],
    ),
    (
        "extract-group-number-too-high",
        image(alphabetical(), filterTags={"pattern": "(x)", "extract": "$2"}),
        ["x"],
        ["spec.images[web].filterTags.extract", "$2 is not a group"],
    ),
    (
        "bad-semver-range",
        image(semver(">=banana")),
        ["1.0.0"],
        ["spec.images[web].policy.semver.range", "invalid version constraint"],
    ),
    (
        "glob-too-long",
        image(alphabetical(), ignoreTags=["ok", "*" * 300]),
        ["a"],
        ["spec.images[web].ignoreTags[1]", "more than the 256 allowed"],
    ),
    (
        "too-many-globs",
        image(alphabetical(), ignoreTags=[f"g{i}" for i in range(65)]),
        ["a"],
        ["spec.images[web].ignoreTags", "65 globs"],
    ),
]


@pytest.mark.parametrize(
    ("bad_image", "tags", "fragments"),
    [c[1:] for c in ERROR_CASES],
    ids=[c[0] for c in ERROR_CASES],
)
def test_choose_tag_errors(bad_image: BundleImage, tags: list[str], fragments: list[str]) -> None:
    with pytest.raises(InvalidInputError) as caught:
        choose_tag(bad_image, tags)
    for fragment in fragments:
        assert fragment in str(caught.value)


# The errors of a field under the image (not "no tag matches"): told with no tags at all.
FIELD_ERROR_CASES = [c for c in ERROR_CASES if c[3][0].startswith("spec.images[web].")]


@pytest.mark.parametrize(
    ("bad_image", "fragments"),
    [(c[1], c[3]) for c in FIELD_ERROR_CASES],
    ids=[c[0] for c in FIELD_ERROR_CASES],
)
def test_check_policy_without_tags(bad_image: BundleImage, fragments: list[str]) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(fragments[0])):
        check_policy(bad_image)
