"""The OCI grammar registry answers are held to, and which URLs are the same origin (where a
registry's credentials may go: pages of a tag list, redirects)."""

from __future__ import annotations

import pytest

from bundler.oci.grammar import is_digest, is_tag, same_origin

SHA256 = "sha256:" + "0123456789abcdef" * 4

TAGS = [
    ("semver", "1.2.3", True),
    ("helm-build-metadata", "1.2.3_build.1", True),
    ("underscore-first", "_x", True),
    ("longest", "a" * 128, True),
    ("too-long", "a" * 129, False),
    ("dot-first", ".x", False),
    ("dash-first", "-x", False),
    ("colon", "a:b", False),
    ("tab", "a\tb", False),
    ("newline-at-the-end", "a\n", False),
    ("empty", "", False),
    ("not-text", 1, False),
]


@pytest.mark.parametrize(("text", "valid"), [c[1:] for c in TAGS], ids=[c[0] for c in TAGS])
def test_tags(text: object, valid: bool) -> None:
    assert is_tag(text) is valid


DIGESTS = [
    ("sha256", SHA256, True),
    ("sha512", "sha512:" + "ab" * 64, True),
    ("other-algorithm", "multihash+base58:QmRZxt2b1FVZPNqd8hsiykDL3TdBDeTSPX9Kv46HmX4Gx8", True),
    ("sha256-uppercase", SHA256.upper().replace("SHA256", "sha256"), False),
    ("sha256-short", "sha256:abc", False),
    ("sha256-long", SHA256 + "0", False),
    ("sha512-short", "sha512:" + "ab" * 32, False),
    ("no-algorithm", "0123456789abcdef" * 4, False),
    ("space-after", SHA256 + " x", False),
    ("newline-after", SHA256 + "\n", False),
    ("too-long", "x:" + "a" * 1023, False),
]


@pytest.mark.parametrize(("text", "valid"), [c[1:] for c in DIGESTS], ids=[c[0] for c in DIGESTS])
def test_digests(text: object, valid: bool) -> None:
    assert is_digest(text) is valid


ORIGINS = [
    ("same", "https://r.example/v2/a", "https://r.example/v2/b?last=x", True),
    ("default-port-written", "https://r.example/v2/a", "https://r.example:443/v2/b", True),
    ("host-case", "https://R.example/v2/a", "https://r.example/v2/b", True),
    ("other-host", "https://r.example/v2/a", "https://evil.example/v2/a", False),
    ("other-port", "http://127.0.0.1:5000/v2/a", "http://127.0.0.1:5001/v2/a", False),
    ("https-to-http", "https://r.example/v2/a", "http://r.example/v2/a", False),
    ("userinfo-trick", "https://r.example/v2/a", "https://r.example@evil.example/v2/a", False),
]


@pytest.mark.parametrize(
    ("first", "second", "same"), [c[1:] for c in ORIGINS], ids=[c[0] for c in ORIGINS]
)
def test_same_origin(first: str, second: str, same: bool) -> None:
    assert same_origin(first, second) is same
