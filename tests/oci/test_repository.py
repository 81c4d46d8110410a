"""Chart versions of HTTP Helm repositories (index.yaml) and the shared newest-first order."""

from __future__ import annotations

import gzip
import re
import socket
from collections.abc import Callable

import pytest
import yaml

from bundler.errors import InvalidInputError, RegistryAnswerError, TransientError
from bundler.oci.credentials import Credentials
from bundler.oci.registry import RegistryOptions
from bundler.oci.repository import list_chart_versions, newest_first
from tests.support.oci.hostile_server import (
    Answer,
    HostileServer,
    Out,
    gzip_bomb,
    head,
    hostile,
    whole,
)

__all__ = ["hostile"]


def _index(entries: dict[str, list[str]]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "entries": {
                name: [{"name": name, "version": v, "urls": [f"{name}-{v}.tgz"]} for v in versions]
                for name, versions in entries.items()
            },
        }
    )


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        (["1.0.0", "1.10.0", "1.9.0"], ["1.10.0", "1.9.0", "1.0.0"]),
        (["1.0.0-rc.1", "1.0.0", "1.0.0-beta"], ["1.0.0", "1.0.0-rc.1", "1.0.0-beta"]),
        (["latest", "1.0.0", "main"], ["1.0.0"]),
        (["1.0.0+b", "1.0.0+a", "1.0.0+b"], ["1.0.0+b", "1.0.0+a"]),
    ],
    ids=[
        "numeric-not-lexical",
        "release-after-prereleases",
        "non-semver-skipped",
        "build-metadata-ties",
    ],
)
def test_newest_first(versions: list[str], expected: list[str]) -> None:
    assert newest_first(versions) == expected


def _serving(server: HostileServer, index: str, status: int = 200) -> str:
    """Serve `index` as `/stable/index.yaml`; the repository's URL."""
    server.answer = lambda path, out: whole(out, index.encode(), status)
    return f"http://{server.host}/stable"


def test_index_versions_of_one_chart_newest_first(hostile: HostileServer) -> None:
    repo = _serving(hostile, _index({"podinfo": ["6.0.0", "6.10.1", "6.2.0"], "other": ["9.9.9"]}))
    assert list_chart_versions(repo, "podinfo", RegistryOptions(timeout=5)) == [
        "6.10.1",
        "6.2.0",
        "6.0.0",
    ]
    assert [path for path, _ in hostile.seen] == ["/stable/index.yaml"]


def test_index_is_fetched_with_basic_auth_and_trailing_slash_tolerated(
    hostile: HostileServer,
) -> None:
    repo = _serving(hostile, _index({"podinfo": ["1.0.0"]}))
    options = RegistryOptions(credentials=Credentials("u", "p"), timeout=5)
    assert list_chart_versions(f"{repo}/", "podinfo", options) == ["1.0.0"]
    [(path, headers)] = hostile.seen
    assert (path, headers["Authorization"]) == (
        "/stable/index.yaml",
        Credentials("u", "p").basic_header(),
    )


@pytest.mark.parametrize(
    ("status", "body", "error", "message"),
    [
        (
            200,
            _index({"other": ["1.0.0"]}),
            RegistryAnswerError,
            "{index}: chart 'podinfo' is not in this repository",
        ),
        (200, "entries: [", RegistryAnswerError, "{index}: malformed YAML"),
        (200, "just: text", RegistryAnswerError, "not a Helm repository index"),
        (404, "", RegistryAnswerError, "{index}: not found: is this a Helm repository?"),
        (401, "", InvalidInputError, "{index}: the repository refused anonymous access (401)"),
        (503, "", TransientError, "{index}: the repository answered 503"),
    ],
    ids=["chart-missing", "bad-yaml", "no-entries", "not-found", "unauthorized", "unavailable"],
)
def test_index_errors_name_the_url(
    hostile: HostileServer, status: int, body: str, error: type[Exception], message: str
) -> None:
    repo = _serving(hostile, body, status)
    expected = message.format(index=f"{repo}/index.yaml")
    with pytest.raises(error, match=re.escape(expected)) as raised:
        list_chart_versions(repo, "podinfo", RegistryOptions(timeout=5))
    assert type(raised.value) is error


def test_unreachable_repository_is_transient() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    repo = f"http://127.0.0.1:{port}/stable"
    with pytest.raises(TransientError, match=f"{repo}/index.yaml: cannot fetch"):
        list_chart_versions(repo, "podinfo", RegistryOptions(timeout=5))


def test_unsupported_scheme_is_invalid_input() -> None:
    with pytest.raises(
        InvalidInputError, match="unsupported repository 'git://x': expected oci://"
    ):
        list_chart_versions("git://x", "podinfo", RegistryOptions(timeout=5))


# -- a hostile repository -------------------------------------------------------------------------


def _endless(server: HostileServer) -> Answer:
    def answer(path: str, out: Out) -> None:
        head(out)
        server.endless(out)

    return answer


def _bomb(server: HostileServer) -> Answer:
    bomb = gzip_bomb(64 << 20)  # made before the request: the client's timeout is not for it

    def answer(path: str, out: Out) -> None:
        whole(out, bomb, Content_Encoding="gzip")

    return answer


INDEX_CASES: list[tuple[str, Callable[[HostileServer], Answer], str]] = [
    (
        "declared-too-large",
        lambda server: lambda path, out: head(out, Content_Length=str(60 << 20)),
        "index.yaml from repository {host} is over the 50 MiB cap: it declares 60 MiB",
    ),
    ("endless", _endless, "index.yaml from repository {host} is over the 50 MiB cap"),
    (
        "gzip-bomb",
        _bomb,
        "index.yaml from repository {host} is over the 50 MiB cap once decompressed",
    ),
]


@pytest.mark.parametrize(
    ("answer", "message"), [c[1:] for c in INDEX_CASES], ids=[c[0] for c in INDEX_CASES]
)
def test_an_index_over_its_cap_is_refused(
    hostile: HostileServer, answer: Callable[[HostileServer], Answer], message: str
) -> None:
    hostile.answer = answer(hostile)
    url = f"http://{hostile.host}/charts"
    with pytest.raises(RegistryAnswerError) as raised:
        list_chart_versions(url, "podinfo", RegistryOptions(timeout=5, deadline=30))
    assert str(raised.value).startswith(f"{url}/index.yaml: ")
    assert message.format(host=hostile.host) in str(raised.value)


def test_a_gzipped_index_is_read(hostile: HostileServer) -> None:
    index = gzip.compress(_index({"podinfo": ["1.0.0", "1.1.0"]}).encode())
    hostile.answer = lambda path, out: whole(out, index, Content_Encoding="gzip")
    url = f"http://{hostile.host}/charts"
    assert list_chart_versions(url, "podinfo", RegistryOptions(timeout=5)) == ["1.1.0", "1.0.0"]
