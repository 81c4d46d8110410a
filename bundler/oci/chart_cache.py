"""Charts fetched once into a local cache keyed by the digest of their archive.

`ChartCache.fetch(repo, chart, version, options)` returns the path of the chart's `.tgz` in the
cache, `<root>/sha256/<hex>.tgz`, downloading it only when the digest is not there yet:
- from an `oci://` registry, the tag's manifest names the chart layer and its digest (one small,
  bounded request); the layer is pulled (bundler.oci.registry.pull_chart: checked against that
  digest) only when the cache lacks it;
- from an http(s) Helm repository, the chart's entry in index.yaml names the archive's URL and
  its digest; the archive is downloaded within the 100 MiB chart cap under one deadline, and
  checked against the digest when the index gives one (an index without digests costs a download
  each time, and its archive is cached under the digest it turns out to have).

Files are written to a temporary name beside their place and renamed into it, so a reader never
sees half a chart and two concurrent commands never corrupt the cache. A cached file is checked
against its digest each time it is read, not only when it was written: one that does not match
(changed on disk, cut short, larger than the chart cap) is removed and fetched again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urljoin

from bundler.core.versions import version_to_tag
from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci.limits import MAX_CHART_BYTES
from bundler.oci.reference import SCHEME as OCI_SCHEME
from bundler.oci.reference import parse_location
from bundler.oci.registry import RegistryOptions, check_chart, pull_chart
from bundler.oci.repository import HTTP_SCHEMES, fetch_bounded, index_releases

DIGEST_ALGORITHM = "sha256"
CACHE_SUBDIR = ("bundler", "charts")


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CACHE_HOME/bundler/charts`, else `~/.cache/bundler/charts`."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base, *CACHE_SUBDIR)


class ChartCache:
    """Chart archives under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def fetch(self, repo: str, chart: str, version: str, options: RegistryOptions) -> Path:
        """The cached archive of `chart` at the exact `version` from `repo`, asked with
        `options` (credentials, transport, timeout and deadline)."""
        if repo.startswith(OCI_SCHEME):
            return self._fetch_oci(repo, chart, version, options)
        if repo.startswith(HTTP_SCHEMES):
            return self._fetch_http(repo, chart, version, options)
        raise InvalidInputError(
            f"unsupported repository {repo!r}: expected oci://, https:// or http://"
        )

    def path_of(self, digest: str) -> Path:
        algorithm, _, hexdigest = digest.partition(":")
        if algorithm != DIGEST_ALGORITHM or not _is_hex(hexdigest):
            raise RegistryAnswerError(f"unsupported chart digest {digest!r}: expected sha256:<hex>")
        return self.root / algorithm / f"{hexdigest}.tgz"

    def _fetch_oci(self, repo: str, chart: str, version: str, options: RegistryOptions) -> Path:
        tag = parse_location(repo).repository(chart).tagged(version_to_tag(version))
        digest = check_chart(tag, options).layer.digest
        path = self.path_of(digest)
        if not _verified(path, digest):
            self._store(path, pull_chart(tag, options).archive)
        return path

    def _fetch_http(self, repo: str, chart: str, version: str, options: RegistryOptions) -> Path:
        url, digest = _index_entry(repo, chart, version, options)
        if digest is not None and _verified(self.path_of(digest), digest):
            return self.path_of(digest)
        data = fetch_bounded(url, options, f"chart {chart} {version}", MAX_CHART_BYTES)
        actual = f"{DIGEST_ALGORITHM}:{hashlib.sha256(data).hexdigest()}"
        if digest is not None and actual != digest:
            raise RegistryAnswerError(
                f"chart {chart} {version} does not match the digest {digest} its index.yaml "
                f"gives (got {actual})",
                obj=url,
            )
        path = self.path_of(actual)
        self._store(path, data)
        return path

    def _store(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(scratch, path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise


def _index_entry(
    repo: str, chart: str, version: str, options: RegistryOptions
) -> tuple[str, str | None]:
    """The archive URL (relative URLs resolved against the repository) and the `sha256:` digest,
    if the index gives one, of `chart` at `version`."""
    for release in index_releases(repo, chart, options):
        if not isinstance(release, dict) or str(release.get("version")) != version:
            continue
        urls = release.get("urls")
        if not isinstance(urls, list) or not urls or not isinstance(urls[0], str):
            raise RegistryAnswerError(
                f"chart {chart} {version} has no download URL in index.yaml", obj=repo
            )
        raw_digest = release.get("digest")
        digest = None
        if isinstance(raw_digest, str) and raw_digest:
            digest = raw_digest if ":" in raw_digest else f"{DIGEST_ALGORITHM}:{raw_digest}"
        return urljoin(f"{repo.rstrip('/')}/", urls[0]), digest
    raise RegistryAnswerError(f"chart {chart!r} has no version {version!r} in index.yaml", obj=repo)


def _verified(path: Path, digest: str) -> bool:
    """Whether the cached file `path` holds the archive of `digest`; one that does not is
    removed (a later fetch stores it again)."""
    try:
        with path.open("rb") as cached:
            data = cached.read(MAX_CHART_BYTES + 1)
    except FileNotFoundError:
        return False
    except IsADirectoryError:
        raise RegistryAnswerError(f"the chart cache entry {path} is a directory") from None
    if f"{DIGEST_ALGORITHM}:{hashlib.sha256(data).hexdigest()}" == digest:
        return True
    path.unlink(missing_ok=True)
    return False


def _is_hex(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)
