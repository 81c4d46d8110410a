"""Version ranges: resolved centrally, once per Bundle generation (or every pollInterval).

Every cluster of a Bundle must get the same concrete version, so ranges are resolved here, before
any cluster is rendered, by the pluggable resolver (issue 5 plugs in OCI tags and index.yaml). Exact
versions never reach the resolver. A range without a resolver, or one the resolver cannot answer,
rejects the whole Bundle for this pass: no BundleDeployment changes, Ready=False says why.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping

from bundler.api.bundle import Bundle
from bundler.api.resources import SECRET
from bundler.core.content import credentials_field, version_field
from bundler.core.planning.inputs import ResolvedVersions
from bundler.core.planning.version_query import ARTIFACT, VersionQuery
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError, TransientError
from bundler.resolution.poll_cache import PollCache
from bundler.resolution.resolvers import VersionResolver
from bundler.runtime.clock import Clock
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj, Store


class VersionResolution:
    """Resolves a Bundle's ranges and remembers the answers for its generation."""

    def __init__(self, resolver: VersionResolver | None, store: Store, clock: Clock) -> None:
        self._resolver = resolver
        self._store = store
        self._kept: PollCache[Mapping[tuple[str, str, str], str]] = PollCache(clock)

    def resolve(self, bundle: Bundle, queries: Iterable[VersionQuery]) -> ResolvedVersions:
        """A concrete version for every query; raises InvalidInputError or TransientError."""
        wanted = {q.key: q for q in queries}
        if not wanted:
            return {}
        kept = self._kept.get(bundle)
        if kept is not None and set(wanted) <= set(kept.answers):
            return {k: kept.answers[k] for k in wanted}
        versions = {k: self._resolve_one(bundle, q) for k, q in sorted(wanted.items())}
        self._kept.put(bundle, versions)
        return versions

    def seconds_until_poll(self, bundle: Bundle) -> float | None:
        """When the ranges of `bundle` are due to be resolved again (pollInterval), if ever."""
        return self._kept.seconds_until_poll(bundle)

    def forget(self, bundle: str) -> None:
        self._kept.forget(bundle)

    def _resolve_one(self, bundle: Bundle, query: VersionQuery) -> str:
        if self._resolver is None:
            raise InvalidInputError(
                f"version {query.constraint!r} of {_what(query)} in {query.repo} is a "
                "range and cannot be resolved: this manager has no version resolver; use an "
                "exact version",
                obj=bundle_ref(bundle),
                field=version_field(bundle.spec),
            )
        secret = self._secret_data(bundle, query.secret)
        return self._resolver(query.repo, query.chart, query.constraint, secret)

    def _secret_data(self, bundle: Bundle, name: str | None) -> dict[str, str] | None:
        if name is None:
            return None
        workspace = bundle.metadata.namespace or ""
        try:
            secret = self._store.get(SECRET, name, workspace)
        except NotFound:
            raise TransientError(
                f"Secret {workspace}/{name} with the repository credentials does not exist",
                obj=bundle_ref(bundle),
                field=credentials_field(bundle.spec),
            ) from None
        return decoded_data(secret)


def _what(query: VersionQuery) -> str:
    return "the artifact" if query.chart == ARTIFACT else f"chart {query.chart!r}"


def decoded_data(secret: Obj) -> dict[str, str]:
    """A Secret's `data`, base64-decoded (bytes that are not UTF-8 replaced, never raised)."""
    data = secret.get("data") or {}
    return {k: base64.b64decode(v).decode("utf-8", "replace") for k, v in data.items()}
