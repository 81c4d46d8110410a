"""The version resolver the manager uses: a range against the charts a repository really has.

`RegistryResolver` is a VersionResolver (bundler.resolution.resolvers). For `oci://` it lists the
tags of the chart's repository, for http(s) it reads the repository's index.yaml; then it picks the
highest version the range allows (bundler.core.versions: Helm's constraint syntax, `_` in tags read
as `+`, prereleases only for a range that names one). An OCI answer is checked to be a Helm chart
before it is returned (its manifest: the chart layer is never downloaded here), so an image pushed
under a chart's name is a message on the Bundle, not a failed install on every cluster. A Kustomize
OCI artifact (chart ARTIFACT: the URL names its repository whole) is resolved against its tags the
same way, without the chart check.

Errors: a registry that cannot be reached, times out, misses the operation's deadline or answers
5xx is a TransientError (the manager retries with backoff and every cluster keeps what it runs);
401/403, a missing chart, no matching version, an artifact that is not a chart and an answer over a
size cap are InvalidInputErrors, since only a change by someone (credentials, a push, the range,
the server) can fix them. Both reach the Bundle as `Ready=False` with the message, which names the
repository and, for a cap, the cap.

Bounded and cheap: every request has a timeout (10 s by default), every operation (a tag listing
with all its pages, a manifest, an index.yaml) a total deadline (60 s by default) however slowly
the server sends, and every answer a size cap (bundler.oci.limits: 4 MiB for a manifest or a tag
list, 50 MiB for an index.yaml, 100 MiB for a chart layer as its manifest declares it); requests
are sent once (never oras's retry loop). Tag lists, failures included, are kept for a few seconds
per (repository, chart, credentials) and asked once among concurrent callers, so a hundred Bundles
on one chart cost one request per pass; a successful chart check is kept for an hour per version.

Transport: an `oci://` registry on a loopback host (127.0.0.1, localhost, [::1]) is spoken to over
plain HTTP, any other over HTTPS unless its host is in `plain_http_hosts` (`--plain-http-registry`).
Credentials come from the Bundle's `helm.secretRef` Secret (bundler.oci.secret_credentials),
else from `fallback_credentials` (`with_docker_config`: the Docker config, for commands run by a
person, who has no workspace Secret at hand), else none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from bundler.core.planning.version_query import ARTIFACT
from bundler.core.versions import SemVer, resolve_version, version_to_tag
from bundler.errors import BundlerError, InvalidInputError
from bundler.oci.credentials import Credentials, from_docker_config
from bundler.oci.reference import SCHEME as OCI_SCHEME
from bundler.oci.reference import parse_location, parse_repository, uses_plain_http
from bundler.oci.registry import RegistryOptions, check_chart
from bundler.oci.repository import list_chart_versions, oci_chart_versions
from bundler.oci.secret_credentials import credentials_from_secret
from bundler.resolution.answer_cache import AnswerCache
from bundler.runtime.clock import Clock, SystemClock

DEFAULT_TIMEOUT = 10.0
DEFAULT_DEADLINE = 60.0
DEFAULT_CACHE_SECONDS = 5.0
CHART_CHECK_SECONDS = 3600.0
NEWEST_SHOWN = 5
MANAGER_CREDENTIALS_HINT = (
    "set spec.helm.secretRef to a kubernetes.io/dockerconfigjson or kubernetes.io/basic-auth "
    "Secret of the workspace"
)
DOCKER_CONFIG_HINT = (
    "add the registry's credentials to the Docker config ($DOCKER_CONFIG/config.json, else "
    "~/.docker/config.json)"
)
# How bundler.oci words a refusal to a client that sent no credentials; a hint replaces its own
# command-line advice, which does not apply to a Bundle.
_ANONYMOUS_REFUSALS = ("authentication required", "refused anonymous access", "access denied")
_CLI_ADVICE = ": pass --username"

FallbackCredentials = Callable[[str], Credentials | None]
_ListingKey = tuple[str, str, Credentials | None]


@dataclass(frozen=True)
class ResolverSettings:
    """`timeout`: seconds per request; `deadline`: seconds per operation (a tag listing with all
    its pages, a manifest, an index.yaml); `cache_seconds`: how long a tag list is reused;
    `credentials_hint`: what to do when a repository wants credentials and got none."""

    timeout: float = DEFAULT_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    plain_http_hosts: frozenset[str] = frozenset()
    cache_seconds: float = DEFAULT_CACHE_SECONDS
    fallback_credentials: FallbackCredentials | None = field(default=None, compare=False)
    credentials_hint: str = MANAGER_CREDENTIALS_HINT

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.deadline <= 0 or self.cache_seconds < 0:
            raise ValueError(
                "resolver: timeout and deadline must be positive, cache_seconds not negative"
            )


def with_docker_config(settings: ResolverSettings, path: Path | None = None) -> ResolverSettings:
    """`settings` for a command run by a person: credentials for a Bundle without a Secret come
    from the Docker config at `path` (default: $DOCKER_CONFIG, else ~/.docker)."""
    hint = DOCKER_CONFIG_HINT if path is None else f"add the registry's credentials to {path}"
    return replace(
        settings,
        fallback_credentials=lambda host: from_docker_config(host, path),
        credentials_hint=hint,
    )


class RegistryResolver:
    """(repo, chart, range, decoded Secret data or None) -> the highest matching chart version."""

    def __init__(self, settings: ResolverSettings | None = None, clock: Clock | None = None):
        self.settings = settings or ResolverSettings()
        clock = clock or SystemClock()
        self._listings: AnswerCache[_ListingKey, tuple[str, ...]] = AnswerCache(
            clock, self.settings.cache_seconds
        )
        self._charts: AnswerCache[tuple[str, str, str, Credentials | None], None] = AnswerCache(
            clock, CHART_CHECK_SECONDS, error_seconds=self.settings.cache_seconds
        )

    def __call__(
        self, repo: str, chart: str, constraint: str, secret: Mapping[str, str] | None
    ) -> str:
        host = repository_host(repo)
        credentials = self._credentials(host, secret)
        versions = self._listings.get(
            (repo, chart, credentials), lambda: self._list(repo, chart, credentials, host)
        )
        chosen = resolve_version(constraint, versions)
        if chosen is None:
            raise no_match(repo, chart, constraint, versions)
        if repo.startswith(OCI_SCHEME) and chart != ARTIFACT:
            self._charts.get(
                (repo, chart, chosen, credentials),
                lambda: self._check_chart(repo, chart, chosen, credentials, host),
            )
        return chosen

    def _credentials(self, host: str, secret: Mapping[str, str] | None) -> Credentials | None:
        if secret is not None:
            return credentials_from_secret(secret, host)
        fallback = self.settings.fallback_credentials
        return None if fallback is None else fallback(host)

    def _options(self, credentials: Credentials | None, host: str) -> RegistryOptions:
        return RegistryOptions(
            credentials=credentials,
            plain_http=uses_plain_http(host, self.settings.plain_http_hosts),
            timeout=self.settings.timeout,
            deadline=self.settings.deadline,
        )

    def _list(
        self, repo: str, chart: str, credentials: Credentials | None, host: str
    ) -> tuple[str, ...]:
        options = self._options(credentials, host)
        try:
            if chart == ARTIFACT:
                found = oci_chart_versions(parse_repository(repo), options)
            else:
                found = list_chart_versions(repo, chart, options)
        except BundlerError as error:
            raise self._explained(error, credentials) from None
        return tuple(found)

    def _check_chart(
        self, repo: str, chart: str, version: str, credentials: Credentials | None, host: str
    ) -> None:
        """RegistryAnswerError when the tag is not a Helm chart (bundler.oci says what it is) or
        its layer is over the chart cap; the layer itself is never downloaded."""
        tag = parse_location(repo).repository(chart).tagged(version_to_tag(version))
        try:
            check_chart(tag, self._options(credentials, host))
        except BundlerError as error:
            raise self._explained(error, credentials) from None

    def _explained(self, error: BundlerError, credentials: Credentials | None) -> BundlerError:
        """`error`, with the hint on credentials when a repository refused an anonymous client."""
        refused = credentials is None and isinstance(error, InvalidInputError)
        if not refused or not any(text in error.message for text in _ANONYMOUS_REFUSALS):
            return error
        message = error.message.partition(_CLI_ADVICE)[0]
        return InvalidInputError(
            f"{message}; {self.settings.credentials_hint}", obj=error.obj, field=error.field
        )


def repository_host(repo: str) -> str:
    """The host (with port) of an `oci://` or http(s) repository URL."""
    if repo.startswith(OCI_SCHEME):
        return parse_location(repo).host
    host = urlsplit(repo).netloc.rpartition("@")[2]
    if not host:
        raise InvalidInputError(
            f"unsupported repository {repo!r}: expected oci://, https:// or http://"
        )
    return host


def no_match(repo: str, chart: str, constraint: str, versions: Sequence[str]) -> InvalidInputError:
    """The error for a range no available version satisfies, naming the newest ones there are."""
    what = "the artifact" if chart == ARTIFACT else f"chart {chart!r}"
    where = f"no version of {what} matches {constraint!r}"
    if not versions:
        return InvalidInputError(f"{where}: the repository has no versions of it", obj=repo)
    newest = ", ".join(versions[:NEWEST_SHOWN])
    message = f"{where}; newest available: {newest}"
    if any(SemVer.parse(v).prerelease for v in versions[:NEWEST_SHOWN]):
        message += "; prereleases match only a range that names one, e.g. '>=1.0.0-0'"
    return InvalidInputError(message, obj=repo)
