"""oci:// references: hosts stay explicit, paths follow the OCI grammar, tags are separate."""

from __future__ import annotations

import re

import pytest

from bundler.errors import InvalidInputError
from bundler.oci.reference import parse_location, parse_repository


@pytest.mark.parametrize(
    ("url", "host", "path"),
    [
        ("oci://127.0.0.1:5000/charts", "127.0.0.1:5000", "charts"),
        ("oci://localhost:5000/a/b", "localhost:5000", "a/b"),
        ("oci://localhost/charts/", "localhost", "charts"),
        ("oci://registry.example.com", "registry.example.com", ""),
        ("oci://[::1]:5000/charts", "[::1]:5000", "charts"),
        ("oci://ghcr.io/my.org/charts", "ghcr.io", "my.org/charts"),
    ],
    ids=[
        "ip-port",
        "localhost-port",
        "localhost-trailing-slash",
        "host-only",
        "ipv6",
        "dotted-path",
    ],
)
def test_location_keeps_the_host_as_written(url: str, host: str, path: str) -> None:
    location = parse_location(url)
    assert (location.host, location.path) == (host, path)


def test_repository_appends_the_chart_name() -> None:
    repository = parse_location("oci://localhost:5000/team/charts").repository("podinfo")
    assert repository.url == "oci://localhost:5000/team/charts/podinfo"
    assert repository.namespace == "team/charts"
    assert (
        repository.tagged("6.1.0_build.1").url
        == "oci://localhost:5000/team/charts/podinfo:6.1.0_build.1"
    )


def test_repository_at_the_registry_root_has_no_namespace() -> None:
    repository = parse_repository("oci://localhost:5000/podinfo")
    assert (repository.chart_name, repository.namespace) == ("podinfo", None)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://127.0.0.1:5000/charts", "expected an oci://HOST/PATH reference"),
        ("oci:///charts", "invalid registry host ''"),
        ("oci://127.0.0.1:5000/Charts", "invalid repository path component 'Charts'"),
        ("oci://127.0.0.1:5000/charts/demo:1.0.0", "a tag or digest is not allowed here"),
        ("oci://127.0.0.1:5000/charts//demo", "invalid repository path component ''"),
    ],
    ids=["wrong-scheme", "no-host", "uppercase-path", "tag-in-location", "empty-component"],
)
def test_bad_locations_are_refused_with_the_cause(url: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_location(url)


def test_repository_reference_must_name_a_repository() -> None:
    with pytest.raises(InvalidInputError, match="must name a repository"):
        parse_repository("oci://127.0.0.1:5000")


def test_invalid_tag_is_refused() -> None:
    with pytest.raises(InvalidInputError, match=re.escape("invalid tag '1.0.0+b'")):
        parse_repository("oci://127.0.0.1:5000/charts/demo").tagged("1.0.0+b")
