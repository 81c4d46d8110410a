"""The version range a merged content names, as a query to resolve (None: an exact version)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bundler.core.content import ContentKind
from bundler.core.versions import is_exact_version, wanted_version

#: `VersionQuery.chart` of a Kustomize OCI artifact: its repository URL names it whole, and its
#: tags are read as versions like a chart's.
ARTIFACT = ""


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


def version_key(content: Mapping[str, Any], kind: ContentKind) -> tuple[str, str, str]:
    """(repo, chart, wanted version) of a merged content: how its resolved version is looked up.
    A Kustomize OCI artifact is (url, "", its tag, else its version); Git has none (empty)."""
    if kind is ContentKind.HELM:
        return (content["repo"], content["chart"], wanted_version(content.get("version")))
    oci = (content.get("source") or {}).get("oci")
    if oci is None:
        return ("", ARTIFACT, "")
    return (oci.get("url") or "", ARTIFACT, oci.get("tag") or wanted_version(oci.get("version")))


def query_for(
    content: Mapping[str, object], kind: ContentKind = ContentKind.HELM
) -> VersionQuery | None:
    """The query a merged content needs, or None when its version is exact; a chart or an OCI
    artifact with no version (and no tag) is the range LATEST_STABLE. Git sources are not
    resolved by the manager (Flux follows their ref)."""
    if kind is ContentKind.KUSTOMIZE:
        source = content.get("source")
        oci = source.get("oci") if isinstance(source, Mapping) else None
        if not isinstance(oci, Mapping) or oci.get("tag") is not None:
            return None
        content = {**oci, "repo": oci.get("url"), "chart": ARTIFACT}
    repo, chart = content.get("repo"), content.get("chart")
    raw = content.get("version")
    version = wanted_version(raw if isinstance(raw, str) else None)
    if is_exact_version(version):
        return None
    secret_ref = content.get("secretRef")
    secret = secret_ref.get("name") if isinstance(secret_ref, Mapping) else None
    return VersionQuery(str(repo), str(chart), version, secret)
