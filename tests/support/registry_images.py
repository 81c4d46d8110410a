"""Tiny real container images pushed to a test registry (tests.support.registry_fixtures), over the
distribution API with requests: a config blob, one gzip layer and an OCI image manifest, or an
OCI image index over one such image per platform.

Each image's layer holds a file naming its repository, tag and platform, so every push has its own
digest. The registry's credentials, if it has any, are used.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import requests

from tests.support.registry_fixtures import LocalRegistry

IMAGE_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
IMAGE_INDEX = "application/vnd.oci.image.index.v1+json"
IMAGE_CONFIG = "application/vnd.oci.image.config.v1+json"
IMAGE_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
TIMEOUT_S = 10


@dataclass(frozen=True)
class PushedManifest:
    """A manifest as pushed: its bytes, media type and digest."""

    data: bytes
    media_type: str

    @property
    def digest(self) -> str:
        return digest_of(self.data)


def repository_path(repository: str) -> str:
    """The path of `HOST[:PORT]/PATH` in its registry."""
    return repository.split("/", 1)[1]


def digest_of(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def _auth(registry: LocalRegistry) -> tuple[str, str] | None:
    if registry.username is None or registry.password is None:
        return None
    return (registry.username, registry.password)


def put_blob(registry: LocalRegistry, repository: str, data: bytes) -> dict[str, Any]:
    """Upload `data` as a blob of `repository`; its descriptor's digest and size."""
    digest = digest_of(data)
    started = requests.post(
        f"{registry.base_url}/v2/{repository}/blobs/uploads/",
        auth=_auth(registry),
        timeout=TIMEOUT_S,
    )
    started.raise_for_status()
    location = urljoin(registry.base_url, started.headers["Location"])
    separator = "&" if "?" in location else "?"
    requests.put(
        f"{location}{separator}digest={digest}", data=data, auth=_auth(registry), timeout=TIMEOUT_S
    ).raise_for_status()
    return {"digest": digest, "size": len(data)}


def put_manifest(
    registry: LocalRegistry, repository: str, reference: str, manifest: PushedManifest
) -> None:
    """Store `manifest` under `reference` (a tag or its digest)."""
    requests.put(
        f"{registry.base_url}/v2/{repository}/manifests/{reference}",
        data=manifest.data,
        headers={"Content-Type": manifest.media_type},
        auth=_auth(registry),
        timeout=TIMEOUT_S,
    ).raise_for_status()


def push_artifact(
    registry: LocalRegistry,
    repository: str,
    tag: str,
    *,
    config_type: str,
    layer_type: str,
    layer: bytes = b"just a file",
) -> None:
    """Push an artifact of one layer with the given media types, without bundler (a chart, a
    Flux artifact or something else; hostile content included)."""
    config = {"mediaType": config_type, **put_blob(registry, repository, b"{}")}
    manifest = {
        "schemaVersion": 2,
        "mediaType": IMAGE_MANIFEST,
        "config": config,
        "layers": [{"mediaType": layer_type, **put_blob(registry, repository, layer)}],
    }
    put_manifest(
        registry, repository, tag, PushedManifest(json.dumps(manifest).encode(), IMAGE_MANIFEST)
    )


def get_manifest(registry: LocalRegistry, repository: str, tag: str) -> requests.Response:
    """The answer to `GET` of a tag's image manifest."""
    response = requests.get(
        f"{registry.base_url}/v2/{repository}/manifests/{tag}",
        headers={"Accept": IMAGE_MANIFEST},
        auth=_auth(registry),
        timeout=TIMEOUT_S,
    )
    response.raise_for_status()
    return response


def get_blob(registry: LocalRegistry, repository: str, digest: str) -> bytes:
    response = requests.get(
        f"{registry.base_url}/v2/{repository}/blobs/{digest}",
        auth=_auth(registry),
        timeout=TIMEOUT_S,
    )
    response.raise_for_status()
    return response.content


def _layer(text: str) -> bytes:
    """A gzip tar holding one file, `hello.txt`, with `text` (no timestamps: reproducible)."""
    data = text.encode()
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return gzip.compress(archive.getvalue(), mtime=0)


def _platform(platform: str) -> dict[str, str]:
    os, architecture, *variant = platform.split("/")
    return {"os": os, "architecture": architecture} | ({"variant": variant[0]} if variant else {})


def build_image(
    registry: LocalRegistry, repository: str, tag: str, platform: str = "linux/amd64"
) -> PushedManifest:
    """Upload the blobs of a one-layer image for `platform`; its manifest, not yet tagged."""
    layer = _layer(f"{repository}:{tag} for {platform}\n")
    diff_id = digest_of(gzip.decompress(layer))
    config = json.dumps(
        {
            **_platform(platform),
            "config": {"Cmd": ["/bin/true"]},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        },
        sort_keys=True,
    ).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": IMAGE_MANIFEST,
        "config": {"mediaType": IMAGE_CONFIG, **put_blob(registry, repository, config)},
        "layers": [{"mediaType": IMAGE_LAYER, **put_blob(registry, repository, layer)}],
    }
    return PushedManifest(json.dumps(manifest, sort_keys=True).encode(), IMAGE_MANIFEST)


def push_image(
    registry: LocalRegistry, repository: str, tag: str, platform: str = "linux/amd64"
) -> PushedManifest:
    """Push a single-platform image as `repository:tag`."""
    manifest = build_image(registry, repository, tag, platform)
    put_manifest(registry, repository, tag, manifest)
    return manifest


def push_index(
    registry: LocalRegistry,
    repository: str,
    tag: str,
    platforms: Sequence[str] = ("linux/amd64", "linux/arm64"),
) -> PushedManifest:
    """Push an image per platform (by digest) and an OCI image index over them as `tag`."""
    entries = []
    for platform in platforms:
        image = build_image(registry, repository, tag, platform)
        put_manifest(registry, repository, image.digest, image)
        entries.append(
            {
                "mediaType": image.media_type,
                "digest": image.digest,
                "size": len(image.data),
                "platform": _platform(platform),
            }
        )
    index = {"schemaVersion": 2, "mediaType": IMAGE_INDEX, "manifests": entries}
    manifest = PushedManifest(json.dumps(index, sort_keys=True).encode(), IMAGE_INDEX)
    put_manifest(registry, repository, tag, manifest)
    return manifest


def push_tags(
    registry: LocalRegistry, repository: str, tags: Sequence[str]
) -> dict[str, PushedManifest]:
    """Push one image and tag it with each of `tags` (cheap: one set of blobs)."""
    pushed: dict[str, PushedManifest] = {}
    for tag in tags:
        manifest = pushed.get(tags[0]) or build_image(registry, repository, tags[0])
        put_manifest(registry, repository, tag, manifest)
        pushed[tag] = manifest
    return pushed
