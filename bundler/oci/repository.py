"""Which versions of a chart a repository offers: OCI tags or an HTTP repository's index.yaml.

The answer is always chart versions (an OCI tag's `_` read back as `+`), only those that are
SemVer, newest first; the manager resolves a Bundle's version range against it.

An index.yaml is fetched as one operation under `RegistryOptions.deadline` and read within
MAX_INDEX_BYTES (50 MiB, Flux's limit), decoded or not (bundler.oci.limits).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import requests

from bundler import yamlload
from bundler.core.versions import SemVer, tag_to_version
from bundler.errors import InvalidInputError, RegistryAnswerError, TransientError
from bundler.oci.client import connection_error_cause
from bundler.oci.credentials import Credentials
from bundler.oci.deadline import Deadline, watch_session
from bundler.oci.limits import MAX_INDEX_BYTES, Transfer, read_body, send
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


def fetch_bounded(url: str, options: RegistryOptions, what: str, cap: int) -> bytes:
    """The body of `GET url` from an HTTP Helm repository (`what`: 'index.yaml', 'the chart'),
    as one operation under `options.deadline`, read within `cap` bytes."""
    credentials = options.credentials
    auth = None if credentials is None else (credentials.username, credentials.password)
    server = f"repository {urlsplit(url).netloc.rpartition('@')[2]}"
    with Deadline(options.deadline) as deadline, watch_session(requests.Session()) as session:
        transfer = Transfer(what, server, url, deadline)
        try:
            response = send(
                session,
                "GET",
                url,
                transfer,
                headers={},
                timeout=options.timeout,
                auth=auth,
                verify=options.tls_verify,
            )
        except requests.RequestException as err:
            if deadline.expired:
                raise transfer.deadline_passed() from err
            if isinstance(err, requests.Timeout):
                raise TransientError(f"no answer within {options.timeout:g}s", obj=url) from err
            raise TransientError(f"cannot fetch: {connection_error_cause(err)}", obj=url) from err
        _check_status(response, url, credentials)
        return read_body(response, cap, transfer)


def _check_status(response: requests.Response, url: str, credentials: Credentials | None) -> None:
    status = response.status_code
    if status < 400:
        return
    response.close()
    if status in (401, 403):
        who = "anonymous access" if credentials is None else f"user {credentials.username!r}"
        raise InvalidInputError(f"the repository refused {who} ({status})", obj=url)
    if status == 404:
        raise RegistryAnswerError("not found: is this a Helm repository?", obj=url)
    if status == 429 or status >= 500:
        raise TransientError(f"the repository answered {status} {response.reason}", obj=url)
    raise InvalidInputError(f"the repository answered {status} {response.reason}", obj=url)


def index_releases(repo_url: str, chart: str, options: RegistryOptions) -> list[Any]:
    """The entries of `chart` in an HTTP Helm repository's index.yaml, as the index lists them."""
    url = f"{repo_url.rstrip('/')}/{INDEX_FILE}"
    body = fetch_bounded(url, options, INDEX_FILE, MAX_INDEX_BYTES)
    try:
        index = yamlload.load_large(body, url)
    except InvalidInputError as err:  # malformed YAML: the repository's answer, not the user's
        raise RegistryAnswerError(err.message, obj=err.obj, field=err.field) from None
    entries = index.get("entries") if isinstance(index, dict) else None
    if not isinstance(entries, dict):
        raise RegistryAnswerError("not a Helm repository index: no `entries` mapping", obj=url)
    releases = entries.get(chart)
    if not isinstance(releases, list):
        raise RegistryAnswerError(f"chart {chart!r} is not in this repository", obj=url)
    return releases


def index_chart_versions(repo_url: str, chart: str, options: RegistryOptions) -> list[str]:
    """The versions of `chart` listed in an HTTP Helm repository's index.yaml, newest first."""
    return newest_first(
        str(release["version"])
        for release in index_releases(repo_url, chart, options)
        # a version is a scalar; anything else (even an alias to a huge tree) is skipped unread
        if isinstance(release, dict) and isinstance(release.get("version"), str | int | float)
    )


def list_chart_versions(repo_url: str, chart: str, options: RegistryOptions) -> list[str]:
    """The versions of `chart` in `repo_url` (`oci://...` or an http(s) Helm repository)."""
    if repo_url.startswith(OCI_SCHEME):
        return oci_chart_versions(parse_location(repo_url).repository(chart), options)
    if repo_url.startswith(HTTP_SCHEMES):
        return index_chart_versions(repo_url, chart, options)
    raise InvalidInputError(
        f"unsupported repository {repo_url!r}: expected oci://, https:// or http://"
    )
