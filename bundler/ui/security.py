"""Who may use the dashboard's credentials: the address it binds, the Host and Origin it
answers, and the token every action carries.

The server acts with the user's kubeconfig, so anything that can make it act is the user.
- It binds loopback unless told otherwise explicitly (`--allow-non-loopback`).
- Every request must name the server in its Host header: `localhost`, the bound address or, on
  a non-loopback bind, an IP literal. A page from another site whose DNS name was made to
  resolve to 127.0.0.1 (DNS rebinding) sends its own name as Host and is refused, so it can
  neither read the fleet nor the token.
- An action (POST) must come from the dashboard's own origin (Origin equal to http:// and the
  Host), as JSON (a cross-site form cannot send that without a preflight the server never
  grants), and carry the session's token in a header: a random token made at start, handed to
  the page by a same-origin request that other sites cannot read.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field

from bundler.errors import InvalidInputError

DEFAULT_ADDR = "127.0.0.1:8090"
LOCALHOST = "localhost"
CSRF_HEADER = "X-Bundler-CSRF"
_MAX_PORT = 65535


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        return self.host == LOCALHOST or ipaddress.ip_address(self.host).is_loopback

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{port if port is not None else self.port}"


def parse_addr(text: str, flag: str = "--addr") -> Address:
    """`HOST:PORT` (an IP address or localhost; IPv6 in brackets); InvalidInputError naming
    `flag` otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > _MAX_PORT:
        raise InvalidInputError(f"{text!r} is not HOST:PORT (e.g. {DEFAULT_ADDR})", field=flag)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host != LOCALHOST:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise InvalidInputError(
                f"{host!r} is not an IP address or localhost", field=flag
            ) from None
    return Address(host, int(port))


@dataclass(frozen=True)
class RequestGuard:
    """The checks every request passes, for a server bound to `address` on `port` (the port
    actually bound, when --addr asked for 0)."""

    address: Address
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def host_allowed(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        host, sep, port = host_header.rpartition(":")
        if not sep or port != str(self.port):
            return False
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if host in (LOCALHOST, self.address.host):
            return True
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            return False
        return literal.is_loopback or not self.address.loopback

    def origin_allowed(self, origin: str | None, host_header: str | None) -> bool:
        return bool(origin) and self.host_allowed(host_header) and origin == f"http://{host_header}"

    def token_valid(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(sent.encode(), self.token.encode())
