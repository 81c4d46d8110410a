"""The chart cache: archives fetched from a loopback Helm repository and the local registry, kept
by digest, fetched once."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import package, registry
from bundler.oci.chart_cache import ChartCache, default_cache_dir
from bundler.oci.reference import parse_location
from bundler.oci.registry import RegistryOptions
from tests.support.helm_repository import HelmRepository, serve_helm_repository, write_chart
from tests.support.registry_fixtures import LocalRegistry

HTTP = RegistryOptions(timeout=10, deadline=30)
PLAIN = RegistryOptions(plain_http=True, timeout=10, deadline=30)


@pytest.fixture
def helm_repo(tmp_path: Path) -> Iterator[HelmRepository]:
    with serve_helm_repository(tmp_path / "repo") as repo:
        yield repo


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_chart_from_index_yaml_is_downloaded_once_and_kept_by_digest(
    helm_repo: HelmRepository, tmp_path: Path
) -> None:
    published = helm_repo.publish(write_chart(tmp_path / "src", "demo", "1.0.0"))
    cache = ChartCache(tmp_path / "cache")
    first = cache.fetch(helm_repo.url, "demo", "1.0.0", HTTP)
    second = cache.fetch(helm_repo.url, "demo", "1.0.0", HTTP)
    assert first == second == tmp_path / "cache" / "sha256" / f"{sha256(published)}.tgz"
    assert first.read_bytes() == published.read_bytes()
    assert helm_repo.requests["/demo-1.0.0.tgz"] == 1
    assert helm_repo.requests["/index.yaml"] == 2


def test_an_archive_that_does_not_match_its_index_digest_is_refused_and_not_kept(
    helm_repo: HelmRepository, tmp_path: Path
) -> None:
    published = helm_repo.publish(write_chart(tmp_path / "src", "demo", "1.0.0"))
    published.write_bytes(b"not the archive the index describes")
    cache = ChartCache(tmp_path / "cache")
    with pytest.raises(RegistryAnswerError, match="does not match the digest"):
        cache.fetch(helm_repo.url, "demo", "1.0.0", HTTP)
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("chart", "version", "message"),
    [("demo", "9.9.9", "no version '9.9.9'"), ("other", "1.0.0", "not in this repository")],
    ids=["missing-version", "missing-chart"],
)
def test_a_chart_the_index_does_not_list_is_a_registry_answer_error(
    helm_repo: HelmRepository, tmp_path: Path, chart: str, version: str, message: str
) -> None:
    helm_repo.publish(write_chart(tmp_path / "src", "demo", "1.0.0"))
    with pytest.raises(RegistryAnswerError, match=message):
        ChartCache(tmp_path / "cache").fetch(helm_repo.url, chart, version, HTTP)


def test_a_chart_from_the_registry_is_kept_by_its_layer_digest_and_not_pulled_again(
    oci_registry: LocalRegistry, tmp_path: Path
) -> None:
    archive = package.build_archive(write_chart(tmp_path / "src", "ocidemo", "2.0.0+b.1"))
    location = oci_registry.oci("cache-test")
    registry.push_chart(archive, parse_location(location), PLAIN)
    cache = ChartCache(tmp_path / "cache")
    path = cache.fetch(location, "ocidemo", "2.0.0+b.1", PLAIN)
    assert path == cache.path_of(archive.digest)
    assert path.read_bytes() == archive.data


# What sits in the cache under a chart's digest when it is read again: (id, how it was changed).
CACHE_DAMAGE = [
    ("replaced", lambda data: b"another archive"),
    ("cut-short", lambda data: data[: len(data) // 2]),
    ("one-byte-flipped", lambda data: bytes([data[0] ^ 1]) + data[1:]),
    ("emptied", lambda data: b""),
]


@pytest.mark.parametrize("damage", [c[1] for c in CACHE_DAMAGE], ids=[c[0] for c in CACHE_DAMAGE])
@pytest.mark.parametrize("source", ["oci", "index-yaml"])
def test_a_cached_chart_is_checked_against_its_digest_when_read(
    oci_registry: LocalRegistry,
    helm_repo: HelmRepository,
    tmp_path: Path,
    damage: Callable[[bytes], bytes],
    source: str,
) -> None:
    chart = write_chart(tmp_path / "src", "ocidemo", "2.0.0")
    if source == "oci":
        archive = package.build_archive(chart)
        repo = oci_registry.oci("cache-verify")
        registry.push_chart(archive, parse_location(repo), PLAIN)
        options = PLAIN
    else:
        repo, options = helm_repo.url, HTTP
        helm_repo.publish(chart)
    cache = ChartCache(tmp_path / "cache")
    path = cache.fetch(repo, "ocidemo", "2.0.0", options)
    good = path.read_bytes()
    path.write_bytes(damage(good))

    again = cache.fetch(repo, "ocidemo", "2.0.0", options)

    assert again == path
    assert again.read_bytes() == good  # fetched again, never handed out as it was


def test_a_repository_of_another_scheme_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="expected oci://, https:// or http://"):
        ChartCache(tmp_path).fetch("git://example/charts", "demo", "1.0.0", HTTP)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({"XDG_CACHE_HOME": "/xdg"}, Path("/xdg/bundler/charts")), ({}, None)],
    ids=["xdg-cache-home", "home-cache"],
)
def test_the_default_cache_is_under_the_user_cache_directory(
    environ: dict[str, str], expected: Path | None
) -> None:
    wanted = expected or Path.home() / ".cache" / "bundler" / "charts"
    assert default_cache_dir(environ) == wanted
