"""The version range a merged `helm` names, as a query to resolve (None: an exact version)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bundler.core.versions import is_exact_version, wanted_version


@dataclass(frozen=True)
class VersionQuery:
    """One range to resolve, with the repository credentials Secret it may need."""

    repo: str
    chart: str
    constraint: str
    secret: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.repo, self.chart, self.constraint)


def query_for(helm: Mapping[str, object]) -> VersionQuery | None:
    """The query a merged `helm` needs, or None when its version is exact; no version at all is
    the range LATEST_STABLE."""
    repo, chart = helm.get("repo"), helm.get("chart")
    raw = helm.get("version")
    version = wanted_version(raw if isinstance(raw, str) else None)
    if is_exact_version(version):
        return None
    secret_ref = helm.get("secretRef")
    secret = secret_ref.get("name") if isinstance(secret_ref, Mapping) else None
    return VersionQuery(str(repo), str(chart), version, secret)
