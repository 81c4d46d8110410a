"""What a container image tag points at: its manifest digest and the platforms it offers.

`manifest_digest` asks with HEAD (no body), accepting image indexes and image manifests in their
OCI and Docker forms, and reads `Docker-Content-Digest`; a registry that leaves the header out is
asked again with GET, and the digest is the sha256 of the manifest bytes, as the distribution
spec defines it.

`platform_digest` reads the manifest (within MAX_METADATA_BYTES) and says whether it offers a
platform: an index (or Docker manifest list) offers those of its `manifests[].platform`; a single
image manifest offers the one its config blob names (`os`, `architecture`, `variant`; the config
read within MAX_METADATA_BYTES too). A wanted platform without a variant (`linux/arm64`) accepts
any variant; one with a variant (`linux/arm/v7`) only that variant.

Both take an entered RegistryClient, so the requests of one resolution share its deadline.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from oras.container import Container

from bundler.errors import RegistryAnswerError, TransientError
from bundler.oci import layout
from bundler.oci.client import RegistryClient
from bundler.oci.grammar import checked_digest
from bundler.oci.limits import MAX_METADATA_BYTES, read_body

_ACCEPT = {"Accept": ", ".join(layout.ACCEPTED_MANIFEST_MEDIA_TYPES)}
DIGEST_HEADER = "Docker-Content-Digest"


@dataclass(frozen=True)
class Platform:
    """`os/architecture[/variant]`, as in an OCI image index."""

    os: str
    architecture: str
    variant: str | None = None

    @classmethod
    def parse(cls, text: str) -> Platform:
        os, architecture, *variant = text.split("/", 2)
        return cls(os, architecture, variant[0] if variant else None)

    def offered_by(self, platform: Any) -> bool:
        """Whether a manifest's `platform` (or an image config) is this platform."""
        if not isinstance(platform, dict):
            return False
        return (
            platform.get("os") == self.os
            and platform.get("architecture") == self.architecture
            and (self.variant is None or platform.get("variant") == self.variant)
        )


def manifest_digest(client: RegistryClient, container: Container) -> str:
    """The digest of the manifest `container`'s tag points at."""
    url = f"{client.prefix}://{container.manifest_url()}"
    response = client.do_request(url, "HEAD", headers=dict(_ACCEPT))
    if response.status_code == 404:
        raise _vanished(client)
    digest = response.headers.get(DIGEST_HEADER)
    if not digest:
        return _read_manifest(client, container)[0]
    return checked_digest(digest, "the manifest digest", client.reference)


def platform_digest(client: RegistryClient, container: Container, platform: Platform) -> str | None:
    """The digest of the tag's manifest when it offers `platform`, else None."""
    digest, manifest = _read_manifest(client, container)
    if manifest.get("mediaType") in layout.INDEX_MEDIA_TYPES or "manifests" in manifest:
        entries = manifest.get("manifests")
        offered = isinstance(entries, list) and any(
            isinstance(entry, dict) and platform.offered_by(entry.get("platform"))
            for entry in entries
        )
        return digest if offered else None
    return digest if platform.offered_by(_image_config(client, container, manifest)) else None


def _read_manifest(client: RegistryClient, container: Container) -> tuple[str, dict[str, Any]]:
    url = f"{client.prefix}://{container.manifest_url()}"
    response = client.do_request(url, "GET", headers=dict(_ACCEPT), stream=True)
    digest = response.headers.get(DIGEST_HEADER)
    body = read_body(response, MAX_METADATA_BYTES, client.transfer("the manifest"))
    manifest = _json_object(body, "the manifest", client.reference)
    digest = digest or f"sha256:{hashlib.sha256(body).hexdigest()}"
    return checked_digest(digest, "the manifest digest", client.reference), manifest


def _image_config(
    client: RegistryClient, container: Container, manifest: dict[str, Any]
) -> dict[str, Any]:
    config = manifest.get("config")
    digest = config.get("digest") if isinstance(config, dict) else None
    if not isinstance(digest, str):
        raise RegistryAnswerError(
            "not an image: the manifest is neither an index nor names a config",
            obj=client.reference,
        )
    response = client.get_blob(container, digest, stream=True)
    body = read_body(response, MAX_METADATA_BYTES, client.transfer("the image config"))
    return _json_object(body, "the image config", client.reference)


def _json_object(body: bytes, what: str, reference: str) -> dict[str, Any]:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        document = None
    if not isinstance(document, dict):
        raise RegistryAnswerError(f"{what} is not a JSON object", obj=reference)
    return document


def _vanished(client: RegistryClient) -> TransientError:
    # Listed a moment ago: a tag deleted or moved meanwhile; the next resolution lists again.
    return TransientError("the tag was listed but its manifest is gone", obj=client.reference)
