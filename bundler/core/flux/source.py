"""The Flux source a chart is fetched from: a HelmRepository (http/https) or an OCIRepository (oci).

`chart_source` reads `options.helm.repo` and the chart name into where Flux fetches the chart, and
`source_spec` writes the `spec` of the matching source.toolkit.fluxcd.io/v1 object. An OCI chart
lives in its own repository `<base>/<chart name>`, tagged with its version (`+` written as `_`), as
`bundler chart push` and `helm push` lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.core.versions import version_to_tag

SOURCE_API_VERSION = "source.toolkit.fluxcd.io/v1"
HELM_CHART_LAYER_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


class SourceKind(StrEnum):
    HELM_REPOSITORY = "HelmRepository"
    OCI_REPOSITORY = "OCIRepository"


_KIND_BY_SCHEME = {
    "http": SourceKind.HELM_REPOSITORY,
    "https": SourceKind.HELM_REPOSITORY,
    "oci": SourceKind.OCI_REPOSITORY,
}


class RepoError(ValueError):
    """Why a repository URL cannot be used; the caller adds the object and the field."""


@dataclass(frozen=True)
class ChartSource:
    """Where Flux fetches one chart: a Helm repository's URL, or the chart's own OCI repository."""

    kind: SourceKind
    url: str


def chart_source(repo: str, chart: str) -> ChartSource:
    """The source for `chart` in `repo`; RepoError when the scheme or the URL is unusable.

    Messages never repeat the URL: it may carry credentials.
    """
    scheme, separator, rest = repo.partition("://")
    kind = _KIND_BY_SCHEME.get(scheme.lower()) if separator else None
    if kind is None:
        shown = f"scheme {scheme.lower()!r}" if separator else "a URL without a scheme"
        raise RepoError(f"{shown} is not supported: use https://, http:// or oci://")
    host = rest.split("/", 1)[0]
    if not host:
        raise RepoError(f"the {scheme.lower()}:// URL has no host")
    if "@" in host:
        raise RepoError("credentials in the URL are not supported: use helm.secretRef")
    if any(c.isspace() for c in rest):
        raise RepoError("the URL contains white space")
    url = f"{scheme.lower()}://{rest}"
    if kind is SourceKind.OCI_REPOSITORY:
        url = f"{url.rstrip('/')}/{chart}"
    return ChartSource(kind, url)


def source_spec(
    source: ChartSource,
    *,
    version: str,
    interval: str,
    secret: str | None,
    insecure: bool = False,
) -> dict[str, Any]:
    """The `spec` of the source object; an OCIRepository pins the version's tag."""
    spec: dict[str, Any] = {"url": source.url, "interval": interval}
    if source.kind is SourceKind.OCI_REPOSITORY:
        spec["ref"] = {"tag": version_to_tag(version)}
        if insecure:
            spec["insecure"] = True
        # Helm charts are one layer kept as the packaged .tgz, which helm-controller expects.
        spec["layerSelector"] = {"mediaType": HELM_CHART_LAYER_MEDIA_TYPE, "operation": "copy"}
    if secret is not None:
        spec["secretRef"] = {"name": secret}
    return spec
