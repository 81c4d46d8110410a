"""Charts in an OCI registry: push, pull and tag listing, over bundler's oras client.

Push uploads the config blob and the chart layer (skipping blobs the registry already has), then
the manifest at `<location>/<name>:<version with + as _>`, and reports the manifest digest. Pull
fetches the manifest, insists it is a Helm chart, selects the chart layer by media type, and checks
the bytes against the layer's digest before handing them out.
"""

from __future__ import annotations

import hashlib
import tempfile
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from oras.container import Container

from bundler.core.versions import version_to_tag
from bundler.errors import InvalidInputError, TransientError
from bundler.oci import layout
from bundler.oci.client import DEFAULT_TIMEOUT_S, RegistryClient
from bundler.oci.credentials import Credentials
from bundler.oci.package import ChartArchive, read_chart_yaml
from bundler.oci.reference import ChartRepository, ChartTag, OciLocation

# Registries page tag lists by the hundred or thousand; more pages than this is a server looping.
MAX_TAG_PAGES = 1000


@dataclass(frozen=True)
class RegistryOptions:
    """How to talk to a registry: credentials, transport and the per-request timeout."""

    credentials: Credentials | None = None
    plain_http: bool = False
    # True, False (skip verification) or the path of a CA bundle.
    tls_verify: bool | str = True
    timeout: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class PushedChart:
    reference: ChartTag
    digest: str


@dataclass(frozen=True)
class PulledChart:
    """A chart fetched from a registry: its archive bytes, Chart.yaml and manifest digest."""

    reference: ChartTag
    digest: str
    archive: bytes = field(repr=False)
    chart_yaml: Mapping[str, Any] = field(repr=False)

    @property
    def filename(self) -> str:
        return f"{self.chart_yaml['name']}-{self.chart_yaml['version']}.tgz"


def _client(host: str, reference: str, options: RegistryOptions) -> RegistryClient:
    return RegistryClient(
        host,
        reference=reference,
        credentials=options.credentials,
        plain_http=options.plain_http,
        tls_verify=options.tls_verify,
        timeout=options.timeout,
    )


def _container(repository: ChartRepository, tag: str) -> Container:
    # Built from parts: oras's own parser would read a dotted first path component as a host.
    container = Container(f"{repository.chart_name}:{tag}", registry=repository.host)
    container.namespace = repository.namespace
    return container


def _upload(
    client: RegistryClient, container: Container, blob: layout.Descriptor, data: bytes
) -> None:
    with tempfile.TemporaryDirectory(prefix="bundler-blob-") as scratch:
        path = Path(scratch, "blob")
        path.write_bytes(data)
        client.upload_blob(str(path), container, blob.to_json())


def push_chart(
    archive: ChartArchive, location: OciLocation, options: RegistryOptions
) -> PushedChart:
    """Push a chart archive into `location`; return the tag written and the manifest digest."""
    metadata = archive.metadata
    tag = location.repository(metadata.name).tagged(version_to_tag(metadata.version))
    client = _client(location.host, tag.url, options)
    container = _container(tag.repository, tag.tag)
    config_data = metadata.config_json()
    config = layout.Descriptor.of(layout.CONFIG_MEDIA_TYPE, config_data)
    layer = layout.Descriptor.of(layout.CHART_LAYER_MEDIA_TYPE, archive.data)
    _upload(client, container, config, config_data)
    _upload(client, container, layer, archive.data)
    response = client.upload_manifest(layout.chart_manifest(metadata, config, layer), container)
    body = response.request.body or b""
    sent = body.encode() if isinstance(body, str) else body
    digest = response.headers.get("Docker-Content-Digest") or (
        f"sha256:{hashlib.sha256(sent).hexdigest()}"
    )
    return PushedChart(reference=tag, digest=digest)


def pull_chart(tag: ChartTag, options: RegistryOptions) -> PulledChart:
    """Fetch one tagged chart; InvalidInputError when the artifact is not a Helm chart."""
    client = _client(tag.repository.host, tag.url, options)
    container = _container(tag.repository, tag.tag)
    response = client.do_request(
        f"{client.prefix}://{container.manifest_url()}",
        "GET",
        headers={"Accept": ", ".join(layout.ACCEPTED_MANIFEST_MEDIA_TYPES)},
    )
    try:
        manifest = response.json()
    except ValueError as err:
        raise InvalidInputError("not a Helm chart: the manifest is not JSON", obj=tag.url) from err
    layer = layout.chart_layer(manifest, reference=tag.url)
    data = client.get_blob(container, layer.digest).content
    if not layer.matches(data):
        raise TransientError(
            f"the chart layer does not match its digest {layer.digest} (truncated download?)",
            obj=tag.url,
        )
    digest = response.headers.get("Docker-Content-Digest") or (
        f"sha256:{hashlib.sha256(response.content).hexdigest()}"
    )
    chart_yaml = read_chart_yaml(data, source=tag.url)
    return PulledChart(reference=tag, digest=digest, archive=data, chart_yaml=chart_yaml)


def list_tags(repository: ChartRepository, options: RegistryOptions) -> list[str]:
    """Every tag of a chart repository, as the registry lists them (all pages).

    The answer is checked, as any answer from a server: a body that is not a tag list, or pages
    that never end, are errors naming the repository rather than a crash or a hang.
    """
    client = _client(repository.host, repository.url, options)
    url = f"{client.prefix}://{_container(repository, 'latest').tags_url()}"
    tags: list[str] = []
    for _ in range(MAX_TAG_PAGES):
        response = client.do_request(url, "GET", headers=client.headers)
        tags.extend(_page_tags(response, repository.url))
        following = response.links.get("next", {}).get("url")
        if not following:
            return tags
        url = urllib.parse.urljoin(url, following)
    raise InvalidInputError(
        f"the registry lists the tags on more than {MAX_TAG_PAGES} pages", obj=repository.url
    )


def _page_tags(response: requests.Response, reference: str) -> list[str]:
    """The tags of one page of `GET /v2/<name>/tags/list`: `{"name": ..., "tags": [...]}`."""
    try:
        body = response.json()
    except ValueError:
        raise InvalidInputError("the registry's tag list is not JSON", obj=reference) from None
    tags = body.get("tags") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(tags, list | None):
        raise InvalidInputError(
            'the registry\'s tag list is not an object with a "tags" list', obj=reference
        )
    if not all(isinstance(tag, str) for tag in tags or []):
        raise InvalidInputError(
            "the registry's tag list holds tags that are not text", obj=reference
        )
    return list(tags or [])
