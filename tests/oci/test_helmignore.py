""".helmignore rules, read the way Helm reads them."""

from __future__ import annotations

import pytest

from bundler.errors import InvalidInputError
from bundler.oci.helmignore import glob_to_regex, parse_rules


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        (["*.tgz"], "old-1.0.0.tgz", False, True),
        (["*.tgz"], "charts/dep-1.0.0.tgz", False, True),
        (["*.tgz"], "values.yaml", False, False),
        (["docs/*.md"], "docs/a.md", False, True),
        (["docs/*.md"], "docs/sub/a.md", False, False),
        (["/NOTES.txt"], "NOTES.txt", False, True),
        (["/NOTES.txt"], "templates/NOTES.txt", False, False),
        (["ci/"], "ci", True, True),
        (["ci/"], "ci", False, False),
        (["file?.txt"], "file1.txt", False, True),
        (["file?.txt"], "file10.txt", False, False),
        (["[ab].txt"], "b.txt", False, True),
        (["[^ab].txt"], "b.txt", False, False),
        (["[^ab].txt"], "c.txt", False, True),
        (["\\*.txt"], "*.txt", False, True),
        (["\\*.txt"], "a.txt", False, False),
        (["# comment", "", "  *.bak  "], "x.bak", False, True),
        ([], "templates/.hidden.yaml", False, True),
        ([], "templates/_helpers.tpl", False, False),
        (["!keep.txt"], "other.txt", False, True),
        (["!keep.txt"], "keep.txt", False, False),
        (["*.txt", "!keep.txt"], "keep.txt", False, True),
    ],
    ids=[
        "basename-glob",
        "basename-glob-at-depth",
        "basename-glob-no-match",
        "path-glob",
        "star-does-not-cross-slash",
        "anchored",
        "anchored-only-at-root",
        "dir-rule-on-dir",
        "dir-rule-skips-file",
        "question-mark",
        "question-mark-one-char",
        "class",
        "negated-class-excludes",
        "negated-class-matches",
        "escaped-star",
        "escaped-star-is-literal",
        "comments-blanks-whitespace",
        "default-hidden-in-templates",
        "default-keeps-normal-templates",
        "negation-ignores-non-matches",
        "negation-passes-matches",
        "first-match-wins-as-in-helm",
    ],
)
def test_rules(rules: list[str], path: str, is_dir: bool, ignored: bool) -> None:
    assert parse_rules(rules, source=".helmignore").ignores(path, is_dir=is_dir) is ignored


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("docs/**/*.md", r"line 1 'docs/\*\*/\*.md': double-star \(\*\*\) syntax is not supported"),
        ("[abc", "line 1 '\\[abc': unterminated character class"),
        ("a[]b", "empty character class"),
        ("x\\", "trailing backslash"),
    ],
    ids=["double-star", "unterminated-class", "empty-class", "trailing-backslash"],
)
def test_rules_helm_rejects_name_the_line(line: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_rules([line], source="chart/.helmignore")


def test_glob_star_matches_empty_and_dots() -> None:
    assert glob_to_regex("*").fullmatch(".helmignore")
    assert glob_to_regex("a*").fullmatch("a")
