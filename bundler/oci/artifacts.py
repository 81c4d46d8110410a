"""Flux artifacts (directories of manifests) in an OCI registry: push and pull, over bundler's oras
client and the registry operations charts use.

Push first asks what the tag holds: the same content layer is pushed again as it is (the same
manifest, unless the origin changed); a different artifact under the tag is refused with
TagTakenError, since clusters following that tag would get the new manifests without a rollout,
unless `force` says to replace it. Then the config blob, the layer and the manifest are uploaded.
Pull fetches the manifest, selects the content layer by media type and checks its bytes against
the layer's digest. Both are one operation under `RegistryOptions.deadline`; the manifest is read
within 4 MiB, the layer within MAX_ARTIFACT_BYTES (refused before downloading when its descriptor
declares more).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bundler.errors import RegistryAnswerError, TagTakenError
from bundler.oci import artifact_layout, layout, registry
from bundler.oci.artifact_archive import MAX_ARTIFACT_BYTES, ArtifactArchive
from bundler.oci.artifact_layout import Origin
from bundler.oci.client import RegistryClient
from bundler.oci.reference import ChartTag
from bundler.oci.registry import RegistryOptions

KIND = "a Flux artifact"


@dataclass(frozen=True)
class PushedArtifact:
    """What a push wrote: the tag, the manifest digest, and the content layer digest (or a
    description) of the different artifact a forced push replaced."""

    reference: ChartTag
    digest: str
    replaced: str | None = None


@dataclass(frozen=True)
class PulledArtifact:
    """An artifact fetched from a registry: its tarball, manifest digest and origin."""

    reference: ChartTag
    digest: str
    origin: Origin
    archive: bytes = field(repr=False)


@dataclass(frozen=True)
class _Manifest:
    digest: str
    layer: layout.Descriptor
    origin: Origin


def _fetch(client: RegistryClient, tag: ChartTag) -> _Manifest:
    digest, manifest = registry.fetch_manifest(client, tag, KIND)
    layer = artifact_layout.content_layer(manifest, reference=tag.url)
    registry.check_layer_size(layer, MAX_ARTIFACT_BYTES, "the artifact's layer", tag.url)
    return _Manifest(digest, layer, artifact_layout.origin_of(manifest))


def _held_layer(client: RegistryClient, tag: ChartTag) -> str | None:
    """The content layer digest the tag holds, a description when it holds something that is not
    an artifact, or None when there is no such tag."""
    if not registry.tag_exists(client, tag):
        return None
    try:
        return _fetch(client, tag).layer.digest
    except RegistryAnswerError as err:
        return f"something that is not {KIND} ({err.message})"


def push_artifact(
    archive: ArtifactArchive,
    tag: ChartTag,
    options: RegistryOptions,
    *,
    origin: Origin,
    force: bool = False,
) -> PushedArtifact:
    """Push a packed directory as `tag`; TagTakenError when the tag holds a different artifact,
    unless `force`."""
    config_data = artifact_layout.config_blob(archive.diff_id, origin.created)
    config = layout.Descriptor.of(artifact_layout.CONFIG_MEDIA_TYPE, config_data)
    layer = layout.Descriptor.of(artifact_layout.CONTENT_MEDIA_TYPE, archive.data)
    container = registry.repository_container(tag.repository, tag.tag)
    with registry.registry_client(tag.repository.host, tag.url, options) as client:
        held = _held_layer(client, tag)
        replaced = held if held is not None and held != layer.digest else None
        if replaced is not None and not force:
            raise TagTakenError(
                f"the tag already holds a different artifact ({replaced}; this one is layer "
                f"{layer.digest}): clusters following the tag would get it without a rollout; "
                "push under a new tag, or pass --force to replace it",
                obj=tag.url,
            )
        registry.upload(client, container, config, config_data)
        registry.upload(client, container, layer, archive.data)
        manifest = artifact_layout.artifact_manifest(config, layer, origin)
        digest = registry.upload_manifest(client, tag, manifest)
    return PushedArtifact(reference=tag, digest=digest, replaced=replaced)


def pull_artifact(tag: ChartTag, options: RegistryOptions) -> PulledArtifact:
    """Fetch one tagged artifact's tarball; RegistryAnswerError when it is not a Flux artifact."""
    with registry.registry_client(tag.repository.host, tag.url, options) as client:
        manifest = _fetch(client, tag)
        data = registry.fetch_layer(client, tag, manifest.layer, "the artifact's layer")
    return PulledArtifact(
        reference=tag, digest=manifest.digest, origin=manifest.origin, archive=data
    )
