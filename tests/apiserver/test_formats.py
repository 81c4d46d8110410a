"""The string formats kube-apiserver checks, each as its strfmt registry checks it, and which
formats it keeps at all."""

from __future__ import annotations

import pytest

from bundler.apiserver.formats import is_string_format, valid

CASES = [
    ("date-time", "2026-01-02T03:04:05Z", True),
    ("date-time", "2026-01-02t03:04:05.123+02:00", True),
    ("date-time", "2026-01-02 03:04:05Z", False),
    ("date-time", "2026-01-02T24:00:00Z", False),
    ("date", "2024-02-29", True),
    ("date", "2023-02-29", False),
    ("duration", "1h30m", True),
    ("duration", "3 days", True),
    ("duration", "0", True),
    ("duration", "soon", False),
    ("byte", "aGVsbG8=", True),
    ("byte", "", False),
    ("uri", "https://example.com/a?b", True),
    ("uri", "/an/absolute/path", True),
    ("uri", "relative/path", False),
    ("email", "Ops <ops@example.com>", True),
    ("email", "ops.example.com", False),
    ("hostname", "example.com", True),
    ("hostname", "-example.com", False),
    ("ipv4", "10.0.0.1", True),
    ("ipv4", "010.0.0.1", True),
    ("ipv4", "10.0.0.256", False),
    ("ipv6", "2001:db8::1", True),
    ("ipv6", "10.0.0.1", False),
    ("cidr", "10.0.0.0/8", True),
    ("cidr", "10.0.0.0/33", False),
    ("mac", "01:23:45:67:89:ab", True),
    ("mac", "0123.4567.89ab", True),
    ("mac", "01:23:45:67:89", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
    ("uuid4", "123e4567-e89b-12d3-a456-426614174000", False),
    ("bsonobjectid", "507f1f77bcf86cd799439011", True),
    ("isbn", "978-0-306-40615-7", True),
    ("isbn10", "0-306-40615-3", False),
    ("creditcard", "4111 1111 1111 1111", True),
    ("ssn", "123-45-6789", True),
    ("hexcolor", "#ff8800", True),
    ("rgbcolor", "rgb(1, 2, 300)", False),
    ("password", "anything at all", True),
    ("k8s-short-name", "web-1", True),
    ("k8s-short-name", "Web_1", False),
    ("k8s-long-name", "a.example-1.com", True),
    ("k8s-long-name", "a..b", False),
]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    CASES,
    ids=[f"{name}-{'valid' if ok else 'invalid'}-{value}" for name, value, ok in CASES],
)
def test_valid(name: str, value: str, expected: bool) -> None:
    assert valid(name, value) is expected


@pytest.mark.parametrize(
    ("name", "checked"),
    [
        ("date-time", True),
        ("datetime", True),
        ("k8s-short-name", True),
        ("int32", False),
        ("color", False),
    ],
    ids=["date-time", "without-dashes", "kubernetes-1.34-name", "a-number-format", "unknown"],
)
def test_which_string_formats_are_checked(name: str, checked: bool) -> None:
    assert is_string_format(name) is checked
