"""The total deadline of one registry operation, against a server dripping one byte every 0.2 s:
in the body or in the headers, per-read timeouts never trip, the deadline does."""

from __future__ import annotations

import pytest

from bundler.errors import TransientError
from bundler.oci.deadline import Deadline
from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions, list_tags, pull_chart
from bundler.oci.repository import list_chart_versions
from tests.support.oci.hostile_server import HostileServer, Out, head, hostile

__all__ = ["hostile"]

# Each read waits at most 5 s and a byte arrives every 0.2 s: only the deadline can stop these.
DRIPPING = RegistryOptions(plain_http=True, timeout=5.0, deadline=1.0)


def _drip_body(server: HostileServer) -> None:
    def answer(path: str, out: Out) -> None:
        head(out, Content_Length=str(1 << 20), Content_Type="application/json")
        server.drip(out)

    server.answer = answer


def _drip_headers(server: HostileServer) -> None:
    def answer(path: str, out: Out) -> None:
        out.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        server.drip(out, b"a")

    server.answer = answer


@pytest.mark.parametrize("drip", [_drip_body, _drip_headers], ids=["body", "headers"])
def test_a_dripping_tag_list_stops_at_the_deadline(hostile: HostileServer, drip: object) -> None:
    drip(hostile)  # type: ignore[operator]
    repository = parse_repository(f"oci://{hostile.host}/charts/demo")
    with pytest.raises(TransientError) as raised:
        list_tags(repository, DRIPPING)
    assert str(raised.value).startswith(f"oci://{hostile.host}/charts/demo: registry ")
    assert "within the 1s deadline of this operation" in str(raised.value)


def test_a_dripping_manifest_stops_at_the_deadline(hostile: HostileServer) -> None:
    _drip_body(hostile)
    tag = parse_repository(f"oci://{hostile.host}/charts/demo").tagged("1.0.0")
    with pytest.raises(TransientError, match="did not finish sending the manifest within the 1s"):
        pull_chart(tag, DRIPPING)


@pytest.mark.parametrize("drip", [_drip_body, _drip_headers], ids=["body", "headers"])
def test_a_dripping_index_yaml_stops_at_the_deadline(hostile: HostileServer, drip: object) -> None:
    drip(hostile)  # type: ignore[operator]
    with pytest.raises(TransientError) as raised:
        list_chart_versions(f"http://{hostile.host}/charts", "demo", DRIPPING)
    assert str(raised.value).startswith(f"http://{hostile.host}/charts/index.yaml: repository ")
    assert "within the 1s deadline of this operation" in str(raised.value)


def test_a_deadline_is_shared_by_every_request_of_the_operation() -> None:
    with Deadline(10.0) as deadline:
        assert deadline.timeout(30.0) <= 10.0
        assert deadline.timeout(2.0) == 2.0
        assert not deadline.expired
    with Deadline(0.0) as passed:
        assert passed.expired and passed.remaining() == 0.0
