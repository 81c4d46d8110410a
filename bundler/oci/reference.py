"""`oci://` references: where a chart lives in a registry, parsed strictly.

`oci://HOST[:PORT]/PATH` names a place for charts (what `chart push` pushes into); the chart's
repository is that place plus the chart name, and a tag selects one version. The host is always
explicit: a reference never falls back to Docker Hub, so `127.0.0.1:5000` and `localhost:5000` stay
what they are. Repository path components follow the OCI distribution grammar, so a bad name fails
here with a message instead of at the registry.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from bundler.errors import InvalidInputError

SCHEME = "oci://"

# OCI distribution spec: path components of a repository name.
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
MAX_PORT = 65535
_LOOPBACK_NAMES = frozenset({"localhost"})
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::\d{1,5})?")


@dataclass(frozen=True)
class OciLocation:
    """A registry host and a repository path in it (the path may be empty)."""

    host: str
    path: str

    @property
    def url(self) -> str:
        return f"{SCHEME}{self.host}/{self.path}" if self.path else f"{SCHEME}{self.host}"

    def repository(self, chart_name: str) -> ChartRepository:
        """The repository holding chart `chart_name` under this location."""
        check_component(chart_name, what="chart name", url=self.url)
        path = f"{self.path}/{chart_name}" if self.path else chart_name
        return ChartRepository(host=self.host, path=path)


@dataclass(frozen=True)
class ChartRepository:
    """The repository of one chart: `host` plus `path`, whose last component is the chart name."""

    host: str
    path: str

    @property
    def url(self) -> str:
        return f"{SCHEME}{self.host}/{self.path}"

    @property
    def chart_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def namespace(self) -> str | None:
        """The path before the chart name, or None when the chart sits at the registry root."""
        head, _, _ = self.path.rpartition("/")
        return head or None

    def tagged(self, tag: str) -> ChartTag:
        if not _TAG.fullmatch(tag):
            raise InvalidInputError(
                f"invalid tag {tag!r}: an OCI tag is up to 128 letters, digits, '_', '.' or '-'",
                obj=self.url,
            )
        return ChartTag(repository=self, tag=tag)


@dataclass(frozen=True)
class ChartTag:
    """One tagged artifact in a chart repository."""

    repository: ChartRepository
    tag: str

    @property
    def url(self) -> str:
        return f"{self.repository.url}:{self.tag}"


def check_component(component: str, *, what: str, url: str) -> None:
    if not _COMPONENT.fullmatch(component):
        raise InvalidInputError(
            f"invalid {what} {component!r}: OCI repository names are lowercase letters and "
            "digits, separated by '.', '_', '__' or '-'",
            obj=url,
        )


def parse_location(url: str) -> OciLocation:
    """Parse `oci://HOST[:PORT][/PATH]`; tags and digests are not part of a location."""
    if not url.startswith(SCHEME):
        raise InvalidInputError(f"expected an {SCHEME}HOST/PATH reference, got {url!r}")
    host, _, path = url[len(SCHEME) :].partition("/")
    path = path.strip("/")
    if not _HOST.fullmatch(host):
        raise InvalidInputError(f"invalid registry host {host!r}", obj=url)
    _, colon, port = host.rpartition(":")
    if colon and port.isdigit() and not 0 < int(port) <= MAX_PORT:
        raise InvalidInputError(f"port {port} is not between 1 and {MAX_PORT}", obj=url)
    for component in path.split("/") if path else []:
        if ":" in component or "@" in component:
            raise InvalidInputError(
                "a tag or digest is not allowed here: give the version separately", obj=url
            )
        check_component(component, what="repository path component", url=url)
    return OciLocation(host=host, path=path)


def parse_repository(url: str) -> ChartRepository:
    """Parse `oci://HOST[:PORT]/PATH/NAME`, the repository NAME (of charts, artifacts or images)."""
    location = parse_location(url)
    if not location.path:
        raise InvalidInputError(
            "the reference must name a repository (of a chart, an artifact or an image): "
            "oci://HOST/PATH/NAME",
            obj=url,
        )
    head, _, name = location.path.rpartition("/")
    return OciLocation(host=location.host, path=head).repository(name)


def parse_tagged(url: str) -> tuple[ChartRepository, str | None]:
    """Parse `oci://HOST[:PORT]/PATH[:TAG]`: a repository, and its tag when one is given."""
    head, slash, last = url.rpartition("/")
    name, colon, tag = last.partition(":")
    if not slash or not colon or head.endswith(":/"):
        return parse_repository(url), None
    repository = parse_repository(f"{head}/{name}")
    return repository, repository.tagged(tag).tag


def uses_plain_http(host: str, configured: frozenset[str]) -> bool:
    """Plain HTTP for a configured host (with or without its port) or a loopback one."""
    name = _hostname(host)
    if host in configured or name in configured or name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host
