"""Byte caps against a hostile server on 127.0.0.1: declared sizes refused before reading, endless
bodies cut at the cap, gzip bombs cut once decoded; the bytes read are counted by urllib3."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from bundler.errors import BundlerError, RegistryAnswerError, TransientError
from bundler.oci.deadline import Deadline
from bundler.oci.limits import CHUNK_BYTES, MiB, Transfer, read_body, send, size_text
from tests.support.oci.hostile_server import HostileServer, Out, gzip_bomb, head, hostile, whole

__all__ = ["hostile"]

CAP = 4 * MiB


@pytest.fixture
def deadline() -> Iterator[Deadline]:
    with Deadline(30.0) as entered:
        yield entered


def _read(
    server: HostileServer, deadline: Deadline, seen: list[requests.Response] | None = None
) -> bytes:
    """The body of `GET /v2/y/manifests/1`, read within CAP; the response is added to `seen`."""
    transfer = Transfer("the manifest", f"registry {server.host}", "oci://x/y:1", deadline)
    with requests.Session() as session:
        url = f"http://{server.host}/v2/y/manifests/1"
        response = send(session, "GET", url, transfer, headers={}, timeout=5.0)
        (seen if seen is not None else []).append(response)
        return read_body(response, CAP, transfer)


def test_a_body_within_the_cap_is_read_whole(hostile: HostileServer, deadline: Deadline) -> None:
    hostile.answer = lambda path, out: whole(out, b"x" * CAP)
    assert _read(hostile, deadline) == b"x" * CAP


def test_a_declared_size_over_the_cap_is_refused_before_reading(
    hostile: HostileServer, deadline: Deadline
) -> None:
    def declare_5_gib(path: str, out: Out) -> None:
        head(out, Content_Length=str(5 << 30))
        hostile.endless(out)

    hostile.answer = declare_5_gib
    seen: list[requests.Response] = []
    with pytest.raises(RegistryAnswerError) as raised:
        _read(hostile, deadline, seen)
    assert str(raised.value) == (
        f"oci://x/y:1: the manifest from registry {hostile.host} is over the 4 MiB cap: "
        "it declares 5120 MiB"
    )
    assert seen[0].raw.tell() == 0


def test_an_endless_body_stops_at_the_cap(hostile: HostileServer, deadline: Deadline) -> None:
    def endless(path: str, out: Out) -> None:
        head(out)
        hostile.endless(out)

    hostile.answer = endless
    seen: list[requests.Response] = []
    with pytest.raises(RegistryAnswerError, match=r"is over the 4 MiB cap$"):
        _read(hostile, deadline, seen)
    assert CAP < seen[0].raw.tell() <= CAP + CHUNK_BYTES


def test_a_gzip_bomb_stops_at_the_cap_once_decoded(
    hostile: HostileServer, deadline: Deadline
) -> None:
    bomb = gzip_bomb(64 * MiB)
    hostile.answer = lambda path, out: whole(out, bomb, Content_Encoding="gzip")
    seen: list[requests.Response] = []
    with pytest.raises(RegistryAnswerError, match="is over the 4 MiB cap once decompressed"):
        _read(hostile, deadline, seen)
    assert len(bomb) < 128 * 1024
    assert seen[0].raw.tell() <= len(bomb)


def test_gzip_within_the_cap_is_decoded(hostile: HostileServer, deadline: Deadline) -> None:
    bomb = gzip_bomb(2 * MiB)
    hostile.answer = lambda path, out: whole(out, bomb, Content_Encoding="gzip")
    assert _read(hostile, deadline) == b"\0" * (2 * MiB)


@pytest.mark.parametrize(
    ("encoding", "error", "message"),
    [
        ("br", RegistryAnswerError, "unsupported Content-Encoding 'br'"),
        ("gzip", RegistryAnswerError, "is not valid gzip"),
    ],
    ids=["unknown-encoding", "not-gzip"],
)
def test_bodies_that_cannot_be_decoded_say_why(
    hostile: HostileServer,
    deadline: Deadline,
    encoding: str,
    error: type[BundlerError],
    message: str,
) -> None:
    hostile.answer = lambda path, out: whole(out, b"plain text", Content_Encoding=encoding)
    with pytest.raises(error, match=message):
        _read(hostile, deadline)


def test_redirects_are_followed_without_reading_their_bodies(
    hostile: HostileServer, deadline: Deadline
) -> None:
    def redirect_once(path: str, out: Out) -> None:
        if path == "/v2/y/manifests/1":
            head(out, 307, Location="/elsewhere")
            hostile.endless(out)
        else:
            whole(out, b"{}")

    hostile.answer = redirect_once
    assert _read(hostile, deadline) == b"{}"


def test_a_redirect_loop_is_an_error(hostile: HostileServer, deadline: Deadline) -> None:
    hostile.answer = lambda path, out: head(out, 302, Location=path)
    with pytest.raises(RegistryAnswerError, match="redirects the manifest more than 10 times"):
        _read(hostile, deadline)


def test_a_connection_closed_early_is_transient(hostile: HostileServer, deadline: Deadline) -> None:
    def short(path: str, out: Out) -> None:
        head(out, Content_Length="100")
        out.write(b"only ten.")

    hostile.answer = short
    with pytest.raises(TransientError, match=r"the connection to registry .* broke while reading"):
        _read(hostile, deadline)


@pytest.mark.parametrize(
    ("size", "text"),
    [(512, "512 bytes"), (4 * MiB, "4 MiB"), (3 * MiB // 2, "1.5 MiB"), (3 << 30, "3072 MiB")],
    ids=["bytes", "whole-mib", "fraction", "gib"],
)
def test_sizes_read_as_caps_are_written(size: int, text: str) -> None:
    assert size_text(size) == text


def test_only_gzip_is_offered(hostile: HostileServer, deadline: Deadline) -> None:
    hostile.answer = lambda path, out: whole(out, b"{}")
    _read(hostile, deadline)
    assert hostile.seen[0][1]["Accept-Encoding"] == "gzip"
