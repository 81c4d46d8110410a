"""The Flux source a chart is fetched from: a HelmRepository (http/https) or an OCIRepository (oci).

`chart_source` reads `options.helm.repo` and the chart name into where Flux fetches the chart, and
`source_spec` writes the `spec` of the matching source.toolkit.fluxcd.io/v1 object. An OCI chart
lives in its own repository `<base>/<chart name>`, tagged with its version (`+` written as `_`), as
`bundler chart push` and `helm push` lay it out.

`helm.valuesFiles` (files inside the chart, merged in order in place of its values.yaml, before
the release's values) belong to the HelmChart Flux reads a HelmRepository's chart through. An
OCIRepository, read through the HelmRelease's chartRef, has no such thing, so an `oci://` chart
with valuesFiles is read as Flux reads OCI charts through a HelmChart: a HelmRepository of `type:
oci` whose URL is the registry base, the chart and version in the HelmRelease's chart template,
its signature check (`source.verify`: provider and secretRef) in that template's `verify`. The
values files then mean the same for every chart, wherever it is.

`options.helm.source` holds the source's other fields under Flux's names; `check_source_options`
refuses those the source's kind does not have, naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
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


# Fields of options.helm.source copied to the source's spec as they are, by the kinds having them.
_SOURCE_FIELDS: dict[SourceKind, tuple[str, ...]] = {
    SourceKind.OCI_REPOSITORY: (
        "timeout",
        "provider",
        "verify",
        "certSecretRef",
        "proxySecretRef",
        "serviceAccountName",
    ),
    SourceKind.HELM_REPOSITORY: ("timeout", "certSecretRef", "passCredentials"),
}
# Written by source_spec itself (interval), or nowhere else.
SOURCE_FIELDS = ("interval", *sorted({f for fields in _SOURCE_FIELDS.values() for f in fields}))
_HOW_FLUX_READS = {
    SourceKind.OCI_REPOSITORY: "an OCIRepository (oci://)",
    SourceKind.HELM_REPOSITORY: "a HelmRepository (https:// or http://)",
}
DEFAULT_VERIFICATION_PROVIDER = "cosign"


class RepoError(ValueError):
    """Why a repository URL cannot be used; the caller adds the object and the field."""


class SourceOptionError(ValueError):
    """A field the source's kind does not have; `field` is its path below options.helm."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


# The fields of source.verify a HelmChart's verify takes (an OCI HelmRepository's chart).
_CHART_VERIFY_FIELDS = ("provider", "secretRef")
_OCI_HELM_REPOSITORY_FIELDS = ("timeout", "certSecretRef", "provider", "verify")


@dataclass(frozen=True)
class ChartSource:
    """Where Flux fetches one chart: a Helm repository's URL, or the chart's own OCI repository;
    `oci` marks a HelmRepository of type oci (the registry base, for a chart with valuesFiles)."""

    kind: SourceKind
    url: str
    oci: bool = False

    @property
    def through_chart(self) -> bool:
        """Whether Flux reads the chart through a HelmChart (the HelmRelease's chart template)."""
        return self.kind is SourceKind.HELM_REPOSITORY


def chart_source(repo: str, chart: str, *, values_files: bool = False) -> ChartSource:
    """The source for `chart` in `repo`; RepoError when the scheme or the URL is unusable. With
    `values_files`, an `oci://` chart is read through a HelmRepository of type oci.

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
    if kind is SourceKind.OCI_REPOSITORY and values_files:
        return ChartSource(SourceKind.HELM_REPOSITORY, url.rstrip("/"), oci=True)
    if kind is SourceKind.OCI_REPOSITORY:
        url = f"{url.rstrip('/')}/{chart}"
    return ChartSource(kind, url)


def source_for(repo: str, chart: str, helm: Mapping[str, Any]) -> ChartSource:
    """`chart_source` for options.helm (wire JSON): valuesFiles decide how an oci:// chart is
    read."""
    return chart_source(repo, chart, values_files=bool(helm.get("valuesFiles")))


def check_source_options(source: ChartSource, helm: Mapping[str, Any]) -> None:
    """SourceOptionError for a field of `helm` (options.helm as wire JSON, merged) that `source`
    does not take."""
    options = helm.get("source") or {}
    if source.oci:
        _check_oci_chart_options(options)
        return
    kind = source.kind
    other = next(k for k in SourceKind if k is not kind)
    for name in options:
        if name in _SOURCE_FIELDS[other] and name not in _SOURCE_FIELDS[kind]:
            raise SourceOptionError(
                f"source.{name}",
                f"is a field of {_HOW_FLUX_READS[other]}; this chart is read through "
                f"{_HOW_FLUX_READS[kind]}",
            )
    if "ignoreMissingValuesFiles" in helm and not source.through_chart:
        raise SourceOptionError(
            "ignoreMissingValuesFiles", "applies only with valuesFiles, which this chart has not"
        )


def _check_oci_chart_options(options: Mapping[str, Any]) -> None:
    why = (
        "with helm.valuesFiles an oci:// chart is read through a HelmRepository of type oci and "
        "the HelmRelease's chart template, which take"
    )
    for name in options:
        if name in SOURCE_FIELDS and name != "interval" and name not in _OCI_HELM_REPOSITORY_FIELDS:
            raise SourceOptionError(f"source.{name}", f"{why} no {name}")
    for name in options.get("verify") or {}:
        if name not in _CHART_VERIFY_FIELDS:
            raise SourceOptionError(
                f"source.verify.{name}",
                f"{why} only {' and '.join(_CHART_VERIFY_FIELDS)} in verify",
            )


def chart_verify(options: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The HelmChart `verify` of an OCI HelmRepository's chart, from options.helm.source."""
    verify = (options or {}).get("verify")
    if not verify:
        return None
    written = {k: verify[k] for k in _CHART_VERIFY_FIELDS if k in verify}
    return {"provider": DEFAULT_VERIFICATION_PROVIDER, **written}


def source_spec(
    source: ChartSource,
    *,
    version: str,
    interval: str,
    secret: str | None,
    insecure: bool = False,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `spec` of the source object; an OCIRepository pins the version's tag. `options` is
    options.helm.source (checked with check_source_options)."""
    options = options or {}
    spec: dict[str, Any] = {"url": source.url, "interval": options.get("interval", interval)}
    if source.oci:
        spec["type"] = "oci"
        if insecure:
            spec["insecure"] = True
        if secret is not None:
            spec["secretRef"] = {"name": secret}
        spec.update(
            {k: options[k] for k in ("timeout", "certSecretRef", "provider") if k in options}
        )
        return spec
    if source.kind is SourceKind.OCI_REPOSITORY:
        spec["ref"] = {"tag": version_to_tag(version)}
        if insecure:
            spec["insecure"] = True
        # Helm charts are one layer kept as the packaged .tgz, which helm-controller expects.
        spec["layerSelector"] = {"mediaType": HELM_CHART_LAYER_MEDIA_TYPE, "operation": "copy"}
    if secret is not None:
        spec["secretRef"] = {"name": secret}
    spec.update({k: options[k] for k in _SOURCE_FIELDS[source.kind] if k in options})
    if "verify" in spec:
        # Required by the CRD, which defaults it; written, so the object is what the Bundle says.
        spec["verify"] = {"provider": DEFAULT_VERIFICATION_PROVIDER, **spec["verify"]}
    return spec
