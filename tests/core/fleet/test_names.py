"""Fleet's bundle names, kept by the import: the test vectors of Fleet's own names package."""

from __future__ import annotations

import pytest

from bundler.core.fleet.names import bundle_name, helm_release_name, limit

STR50 = "1234567890" * 5
STR53 = STR50 + "123"
STR63 = STR50 + "1234567890" + "123"


@pytest.mark.parametrize(
    ("text", "count", "expected"),
    [
        ("1234567", 5, "12345"),
        ("1234567", 6, "123456"),
        ("1234567", 7, "1234567"),
        ("1234567", 8, "1234567"),
        ("12345678", 8, "12345678"),
        ("12345678", 7, "1-25d55"),
        ("123456789", 8, "12-25f9e"),
        ("1-3456789", 8, "1-9b657"),
    ],
    ids=["cut", "cut-6", "fits", "fits-8", "fits-exactly", "hash", "hash-8", "no-double-dash"],
)
def test_limit(text: str, count: int, expected: str) -> None:
    assert limit(text, count) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (STR53, STR53),
        (STR53 + "a", "12345678901234567890123456789012345678901234567-fdba4"),
        (STR63 + "a", "12345678901234567890123456789012345678901234567-eb12d"),
        ("long-name-test-shortpath-with@char", "long-name-test-shortpath-with-char-031bab5e"),
        ("long-name-test-shortpath-with+char", "long-name-test-shortpath-with-char-21c88393"),
        ("long-name-test-0.App_ ", "long-name-test-0-app-5bf6b3fb"),
        ("long-name-test--App_-_12.factor", "long-name-test-app-12-factor-0efbac37"),
        ("bundle.name.example.com", "bundle-name-example-com-645ef821"),
        (STR53[0:46] + "-1234567", "1234567890123456789012345678901234567890123456-d0bce"),
    ],
    ids=[
        "53-characters",
        "54-characters",
        "64-characters",
        "at-sign",
        "plus",
        "dot-capital-underscore-space",
        "many-dashes",
        "dots",
        "no-double-dash",
    ],
)
def test_helm_release_name(text: str, expected: str) -> None:
    assert helm_release_name(text) == expected


@pytest.mark.parametrize(
    ("gitrepo", "path", "expected"),
    [
        ("one", "multi-cluster/hello-world", "one-multi-cluster-hello-world"),
        ("one", ".", "one"),
        ("apps", "./web/", "apps-web"),
    ],
    ids=["fleet-docs-example", "root", "dot-and-slash"],
)
def test_bundle_name_is_gitrepo_and_path(gitrepo: str, path: str, expected: str) -> None:
    assert bundle_name(gitrepo, path) == expected
