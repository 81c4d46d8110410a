"""Helm's OCI layout for charts: the media types, the manifest bundler writes, the check on reads.

A chart artifact is an OCI image manifest whose config blob is the Chart.yaml metadata as JSON
(`application/vnd.cncf.helm.config.v1+json`) and whose chart layer is the `.tgz`
(`application/vnd.cncf.helm.chart.content.v1.tar+gzip`). Helm puts no title annotation on that
layer, so readers select it by media type.

The manifest carries the annotations `helm push` writes: `org.opencontainers.image.title`
(the name), `.version`, `.description`, `.url` (`home`), `.source` (the first of `sources`),
`.authors` (the maintainers, `Name (email), Name`), then the Chart.yaml's own `annotations`, which
may replace any of these but the title and the version. Helm also writes `.created` with the
clock's time, which would give every push of the same chart a new manifest digest, hence a new
revision to Flux and an upgrade on every cluster; bundler writes it only when asked for a time
(`SOURCE_DATE_EPOCH`, the reproducible-builds convention), so the same chart stays the same
manifest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bundler.errors import RegistryAnswerError
from bundler.oci.chart import ChartMetadata
from bundler.oci.grammar import is_digest

MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
# An image index (multi-platform image), in OCI's and in Docker's spelling.
INDEX_MEDIA_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
# Asked for on reads too, so that an image or an index is reported as "not a chart", not "missing".
ACCEPTED_MANIFEST_MEDIA_TYPES = (
    MANIFEST_MEDIA_TYPE,
    "application/vnd.docker.distribution.manifest.v2+json",
    *INDEX_MEDIA_TYPES,
)
CONFIG_MEDIA_TYPE = "application/vnd.cncf.helm.config.v1+json"
CHART_LAYER_MEDIA_TYPE = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
# Charts pushed by Helm 3.0-3.6 used this layer type; Helm still reads them.
LEGACY_CHART_LAYER_MEDIA_TYPE = "application/tar+gzip"
CHART_LAYER_MEDIA_TYPES = (CHART_LAYER_MEDIA_TYPE, LEGACY_CHART_LAYER_MEDIA_TYPE)

ANNOTATION_TITLE = "org.opencontainers.image.title"
ANNOTATION_VERSION = "org.opencontainers.image.version"
ANNOTATION_DESCRIPTION = "org.opencontainers.image.description"
ANNOTATION_URL = "org.opencontainers.image.url"
ANNOTATION_SOURCE = "org.opencontainers.image.source"
ANNOTATION_AUTHORS = "org.opencontainers.image.authors"
ANNOTATION_CREATED = "org.opencontainers.image.created"
# Chart annotations never replace these (Helm's immutableOciAnnotations).
_IMMUTABLE_ANNOTATIONS = (ANNOTATION_TITLE, ANNOTATION_VERSION)


@dataclass(frozen=True)
class Descriptor:
    """An OCI content descriptor: what a blob is, its digest and its size."""

    media_type: str
    digest: str
    size: int

    @classmethod
    def of(cls, media_type: str, data: bytes) -> Descriptor:
        return cls(media_type, f"sha256:{hashlib.sha256(data).hexdigest()}", len(data))

    def to_json(self) -> dict[str, Any]:
        return {"mediaType": self.media_type, "digest": self.digest, "size": self.size}

    def matches(self, data: bytes) -> bool:
        """Whether `data` is the blob this descriptor names (size and sha256)."""
        return len(data) == self.size and Descriptor.of(self.media_type, data) == self


def chart_annotations(metadata: ChartMetadata, created: str | None = None) -> dict[str, str]:
    """The manifest annotations `helm push` writes for a chart; `created` (RFC 3339) only when
    given."""
    generated = {
        ANNOTATION_DESCRIPTION: metadata.description,
        ANNOTATION_TITLE: metadata.name,
        ANNOTATION_VERSION: metadata.version,
        ANNOTATION_URL: metadata.home,
        ANNOTATION_CREATED: created,
        ANNOTATION_SOURCE: metadata.first_source,
        ANNOTATION_AUTHORS: metadata.authors,
    }
    annotations = {key: value for key, value in generated.items() if value}
    for key, value in metadata.annotations.items():
        if key not in _IMMUTABLE_ANNOTATIONS:
            annotations[key] = value
    return dict(sorted(annotations.items()))


def chart_manifest(
    metadata: ChartMetadata, config: Descriptor, layer: Descriptor, created: str | None = None
) -> dict[str, Any]:
    """The image manifest of one chart, built only from content and `created` (so the same
    chart and time give the same manifest)."""
    annotations = chart_annotations(metadata, created)
    return {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": config.to_json(),
        "layers": [layer.to_json()],
        "annotations": annotations,
    }


def descriptor(raw: Any) -> Descriptor | None:
    if not isinstance(raw, Mapping):
        return None
    media_type, digest, size = raw.get("mediaType"), raw.get("digest"), raw.get("size")
    if isinstance(media_type, str) and is_digest(digest) and isinstance(size, int):
        return Descriptor(media_type, digest, size)
    return None


def chart_layer(manifest: Any, *, reference: str) -> Descriptor:
    """The chart layer of a manifest; RegistryAnswerError when the artifact is not a Helm chart."""
    config = descriptor(manifest.get("config")) if isinstance(manifest, Mapping) else None
    if config is None:
        kind = manifest.get("mediaType") if isinstance(manifest, Mapping) else None
        raise RegistryAnswerError(
            f"not a Helm chart: the manifest ({kind or 'unknown media type'}) has no config",
            obj=reference,
        )
    if config.media_type != CONFIG_MEDIA_TYPE:
        raise RegistryAnswerError(
            f"not a Helm chart: config media type is {config.media_type}, "
            f"expected {CONFIG_MEDIA_TYPE}",
            obj=reference,
        )
    layers = [descriptor(raw) for raw in manifest.get("layers") or []]
    charts = [d for d in layers if d is not None and d.media_type in CHART_LAYER_MEDIA_TYPES]
    if len(charts) != 1:
        raise RegistryAnswerError(
            f"not a Helm chart: expected one layer of type {CHART_LAYER_MEDIA_TYPE}, "
            f"found {len(charts)}",
            obj=reference,
        )
    return charts[0]
