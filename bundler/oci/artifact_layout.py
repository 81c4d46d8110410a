"""Flux's OCI layout for manifests (`flux push artifact`): media types, the manifest bundler writes,
the check on reads.

A Flux artifact is an OCI image manifest whose config blob has the media type
`application/vnd.cncf.flux.config.v1+json` and whose one content layer is a gzipped tarball of the
manifests, `application/vnd.cncf.flux.content.v1.tar+gzip` (fluxcd/pkg oci `globals.go`). Flux's
OCIRepository takes the first layer unless its `layerSelector` names a media type; bundler reads
the first layer of the content type, so an artifact with extra layers (a signature, a README) is
still read the way Flux reads it with `layerSelector.mediaType` set to the content type.

The manifest carries the annotations `flux push artifact` writes (fluxcd/pkg oci `constants.go`):
`org.opencontainers.image.source` (`--source`, the Git URL), `.revision` (`--revision`,
`<branch|tag>@sha1:<commit>`) and `.created`. Flux writes `created` with the clock's time, which
would make every push of the same directory a new manifest, hence a new revision and a reconcile
on every cluster; bundler writes it only when given a time (`SOURCE_DATE_EPOCH`), as for charts.
The config is the image config Flux writes, reduced to what is content: `created` when known and
the layer's uncompressed digest as `rootfs.diff_ids`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bundler.errors import RegistryAnswerError
from bundler.oci.layout import MANIFEST_MEDIA_TYPE, Descriptor, descriptor

CONFIG_MEDIA_TYPE = "application/vnd.cncf.flux.config.v1+json"
CONTENT_MEDIA_TYPE = "application/vnd.cncf.flux.content.v1.tar+gzip"

ANNOTATION_SOURCE = "org.opencontainers.image.source"
ANNOTATION_REVISION = "org.opencontainers.image.revision"
ANNOTATION_CREATED = "org.opencontainers.image.created"


@dataclass(frozen=True)
class Origin:
    """Where a pushed directory came from, as `flux push artifact --source/--revision` records it,
    and when it was made (RFC 3339); each is left out of the manifest when None."""

    source: str | None = None
    revision: str | None = None
    created: str | None = None

    def annotations(self) -> dict[str, str]:
        written = {
            ANNOTATION_CREATED: self.created,
            ANNOTATION_REVISION: self.revision,
            ANNOTATION_SOURCE: self.source,
        }
        return {key: value for key, value in sorted(written.items()) if value}


def config_blob(diff_id: str, created: str | None) -> bytes:
    """The config blob: the layer's uncompressed digest, and the creation time when known."""
    config: dict[str, Any] = {"rootfs": {"type": "layers", "diff_ids": [diff_id]}}
    if created:
        config["created"] = created
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def artifact_manifest(config: Descriptor, layer: Descriptor, origin: Origin) -> dict[str, Any]:
    """The image manifest of one artifact, built only from content and `origin` (so the same
    directory and origin give the same manifest)."""
    manifest: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": config.to_json(),
        "layers": [layer.to_json()],
    }
    annotations = origin.annotations()
    if annotations:
        manifest["annotations"] = annotations
    return manifest


def content_layer(manifest: Any, *, reference: str) -> Descriptor:
    """The first content layer of a manifest; RegistryAnswerError when there is none."""
    if not isinstance(manifest, Mapping) or not isinstance(manifest.get("layers"), list):
        kind = manifest.get("mediaType") if isinstance(manifest, Mapping) else None
        raise RegistryAnswerError(
            f"not a Flux artifact: the manifest ({kind or 'unknown media type'}) has no layers",
            obj=reference,
        )
    for raw in manifest["layers"]:
        layer = descriptor(raw)
        if layer is not None and layer.media_type == CONTENT_MEDIA_TYPE:
            return layer
    raise RegistryAnswerError(
        f"not a Flux artifact: no layer of type {CONTENT_MEDIA_TYPE}", obj=reference
    )


def origin_of(manifest: Mapping[str, Any]) -> Origin:
    """The source, revision and creation time a manifest's annotations record."""
    raw = manifest.get("annotations")
    annotations = raw if isinstance(raw, Mapping) else {}

    def text(key: str) -> str | None:
        value = annotations.get(key)
        return value if isinstance(value, str) and value else None

    return Origin(
        source=text(ANNOTATION_SOURCE),
        revision=text(ANNOTATION_REVISION),
        created=text(ANNOTATION_CREATED),
    )
