"""Which versions of a chart a repository offers: OCI tags or an HTTP repository's index.yaml.

The answer is always chart versions (an OCI tag's `_` read back as `+`), only those that are
SemVer, newest first; the manager resolves a Bundle's version range against it.
"""

from __future__ import annotations

from collections.abc import Iterable

import requests

from bundler import yamlload
from bundler.core.versions import SemVer, tag_to_version
from bundler.errors import InvalidInputError, TransientError
from bundler.oci.client import connection_error_cause
from bundler.oci.credentials import Credentials
from bundler.oci.reference import SCHEME as OCI_SCHEME
from bundler.oci.reference import ChartRepository, parse_location
from bundler.oci.registry import RegistryOptions, list_tags

INDEX_FILE = "index.yaml"
HTTP_SCHEMES = ("https://", "http://")


def newest_first(versions: Iterable[str]) -> list[str]:
    """The SemVer versions among `versions`, highest precedence first, each once.

    Versions of equal precedence (`1.0.0+a`, `1.0.0+b`) are ordered by their text, so the result
    never depends on the input order.
    """
    parsed: dict[str, SemVer] = {}
    for text in versions:
        try:
            parsed[text] = SemVer.parse(text)
        except InvalidInputError:
            continue
    return sorted(parsed, key=lambda text: (parsed[text], text), reverse=True)


def oci_chart_versions(repository: ChartRepository, options: RegistryOptions) -> list[str]:
    """The chart versions tagged in an OCI repository, newest first."""
    return newest_first(tag_to_version(tag) for tag in list_tags(repository, options))


def _fetch_index(url: str, credentials: Credentials | None, timeout: float) -> bytes:
    auth = None if credentials is None else (credentials.username, credentials.password)
    try:
        response = requests.get(url, auth=auth, timeout=timeout)
    except requests.Timeout as err:
        raise TransientError(f"no answer within {timeout:g}s", obj=url) from err
    except requests.RequestException as err:
        raise TransientError(f"cannot fetch: {connection_error_cause(err)}", obj=url) from err
    status = response.status_code
    if status in (401, 403):
        who = "anonymous access" if credentials is None else f"user {credentials.username!r}"
        raise InvalidInputError(f"the repository refused {who} ({status})", obj=url)
    if status == 404:
        raise InvalidInputError("not found: is this a Helm repository?", obj=url)
    if status == 429 or status >= 500:
        raise TransientError(f"the repository answered {status} {response.reason}", obj=url)
    if status >= 400:
        raise InvalidInputError(f"the repository answered {status} {response.reason}", obj=url)
    return response.content


def index_chart_versions(
    repo_url: str, chart: str, credentials: Credentials | None, *, timeout: float
) -> list[str]:
    """The versions of `chart` listed in an HTTP Helm repository's index.yaml, newest first."""
    url = f"{repo_url.rstrip('/')}/{INDEX_FILE}"
    index = yamlload.load_large(_fetch_index(url, credentials, timeout), url)
    entries = index.get("entries") if isinstance(index, dict) else None
    if not isinstance(entries, dict):
        raise InvalidInputError("not a Helm repository index: no `entries` mapping", obj=url)
    releases = entries.get(chart)
    if not isinstance(releases, list):
        raise InvalidInputError(f"chart {chart!r} is not in this repository", obj=url)
    return newest_first(
        str(release["version"])
        for release in releases
        # a version is a scalar; anything else (even an alias to a huge tree) is skipped unread
        if isinstance(release, dict) and isinstance(release.get("version"), str | int | float)
    )


def list_chart_versions(
    repo_url: str,
    chart: str,
    credentials: Credentials | None,
    *,
    plain_http: bool,
    timeout: float,
) -> list[str]:
    """The versions of `chart` in `repo_url` (`oci://...` or an http(s) Helm repository)."""
    if repo_url.startswith(OCI_SCHEME):
        repository = parse_location(repo_url).repository(chart)
        options = RegistryOptions(credentials=credentials, plain_http=plain_http, timeout=timeout)
        return oci_chart_versions(repository, options)
    if repo_url.startswith(HTTP_SCHEMES):
        return index_chart_versions(repo_url, chart, credentials, timeout=timeout)
    raise InvalidInputError(
        f"unsupported repository {repo_url!r}: expected oci://, https:// or http://"
    )
