"""Who the dashboard answers: the address it binds, the Host and Origin it accepts, the token."""

from __future__ import annotations

import pytest

from bundler.errors import InvalidInputError
from bundler.ui.security import Address, RequestGuard, parse_addr

LOOPBACK = RequestGuard(Address("127.0.0.1", 8090), 8090, token="t0ken")
ANY = RequestGuard(Address("0.0.0.0", 0), 41000, token="t0ken")


@pytest.mark.parametrize(
    ("text", "host", "port", "loopback"),
    [
        ("127.0.0.1:8090", "127.0.0.1", 8090, True),
        ("localhost:0", "localhost", 0, True),
        ("[::1]:9000", "::1", 9000, True),
        ("0.0.0.0:8090", "0.0.0.0", 8090, False),
        ("192.0.2.7:80", "192.0.2.7", 80, False),
    ],
    ids=["ipv4-loopback", "localhost", "ipv6-loopback", "every-address", "another-address"],
)
def test_addresses_parse(text: str, host: str, port: int, loopback: bool) -> None:
    address = parse_addr(text)
    assert (address.host, address.port, address.loopback) == (host, port, loopback)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("8090", "is not HOST:PORT"),
        ("127.0.0.1:http", "is not HOST:PORT"),
        ("127.0.0.1:70000", "is not HOST:PORT"),
        ("example.com:8090", "is not an IP address or localhost"),
    ],
    ids=["no-host", "port-not-a-number", "port-too-large", "a-dns-name"],
)
def test_bad_addresses_name_the_flag(text: str, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says) as raised:
        parse_addr(text)
    assert raised.value.field == "--addr"


@pytest.mark.parametrize(
    ("guard", "host", "allowed"),
    [
        (LOOPBACK, "127.0.0.1:8090", True),
        (LOOPBACK, "localhost:8090", True),
        (LOOPBACK, "[::1]:8090", True),
        (LOOPBACK, "127.0.0.1:8091", False),
        (LOOPBACK, "attacker.example:8090", False),
        (LOOPBACK, "192.0.2.7:8090", False),
        (LOOPBACK, None, False),
        (ANY, "192.0.2.7:41000", True),
        (ANY, "attacker.example:41000", False),
    ],
    ids=[
        "the-bound-address",
        "localhost",
        "ipv6-loopback",
        "another-port",
        "a-rebound-dns-name",
        "another-ip-on-loopback",
        "no-host-header",
        "an-ip-literal-off-loopback",
        "a-dns-name-off-loopback",
    ],
)
def test_host_headers(guard: RequestGuard, host: str | None, allowed: bool) -> None:
    assert guard.host_allowed(host) is allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://127.0.0.1:8090", True),
        ("http://localhost:8090", False),
        ("https://127.0.0.1:8090", False),
        ("http://attacker.example", False),
        ("null", False),
        (None, False),
    ],
    ids=["same-origin", "other-spelling", "other-scheme", "other-site", "opaque", "missing"],
)
def test_actions_come_from_the_dashboards_own_origin(origin: str | None, allowed: bool) -> None:
    assert LOOPBACK.origin_allowed(origin, "127.0.0.1:8090") is allowed


@pytest.mark.parametrize(
    ("sent", "valid"),
    [("t0ken", True), ("t0ke", False), ("", False), (None, False)],
    ids=["the-token", "another", "empty", "missing"],
)
def test_the_csrf_token(sent: str | None, valid: bool) -> None:
    assert LOOPBACK.token_valid(sent) is valid


def test_every_guard_has_its_own_token() -> None:
    address = Address("127.0.0.1", 0)
    assert RequestGuard(address, 1).token != RequestGuard(address, 1).token
