"""Charts in an OCI registry: push, pull and tag listing, over bundler's oras client; the
manifest, layer and tag operations underneath serve Flux artifacts too (bundler.oci.artifacts).

Push first asks whether the tag `<location>/<name>:<version with + as _>` exists: a tag holding
the same chart layer is pushed again as it is (the same manifest, unless the annotations changed);
a tag holding a different chart (or something else) is refused with TagTakenError, since the same
version would then name two charts and clusters pinned to it would get the new one without a
rollout, unless `force` says to replace it (the old layer's digest is reported). Then it uploads the
config blob and the chart layer (skipping blobs the registry already has) and the manifest, and
reports the manifest digest. Pull
fetches the manifest, insists it is a Helm chart, selects the chart layer by media type, and checks
the bytes against the layer's digest before handing them out.

Every function is one operation under one deadline (`RegistryOptions.deadline`), and reads within
the caps of bundler.oci.limits: the manifest and the tag list (all pages together) 4 MiB, the chart
layer 100 MiB, refused before downloading when its descriptor or Content-Length declares more.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oras.container import Container

from bundler.core.versions import version_to_tag
from bundler.errors import RegistryAnswerError, TagTakenError, TransientError
from bundler.oci import layout
from bundler.oci.client import DEFAULT_DEADLINE_S, DEFAULT_TIMEOUT_S, RegistryClient
from bundler.oci.credentials import Credentials
from bundler.oci.grammar import checked_digest, checked_tags, origin, same_origin
from bundler.oci.limits import (
    MAX_CHART_BYTES,
    MAX_METADATA_BYTES,
    MAX_TAG_LIST_BYTES,
    read_body,
    size_text,
)
from bundler.oci.package import ChartArchive, read_chart_yaml
from bundler.oci.reference import ChartRepository, ChartTag, OciLocation

# Registries page tag lists by the hundred or thousand; more pages than this is a server looping.
MAX_TAG_PAGES = 1000
# A tag list within MAX_TAG_LIST_BYTES holds at most a few hundred thousand tags; fewer are plenty.
MAX_TAGS = 100_000


@dataclass(frozen=True)
class RegistryOptions:
    """How to talk to a registry: credentials, transport, the timeout of each request and the
    deadline of each operation (all its requests together)."""

    credentials: Credentials | None = None
    plain_http: bool = False
    # True, False (skip verification) or the path of a CA bundle.
    tls_verify: bool | str = True
    timeout: float = DEFAULT_TIMEOUT_S
    deadline: float = DEFAULT_DEADLINE_S


@dataclass(frozen=True)
class PushedChart:
    """What a push wrote: the tag and the manifest digest; `replaced` is the chart layer digest
    (or a description) of the different artifact a forced push replaced."""

    reference: ChartTag
    digest: str
    replaced: str | None = None


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


def registry_client(host: str, reference: str, options: RegistryOptions) -> RegistryClient:
    """A client for one operation on `host` (enter it), labelled with `reference` for errors."""
    return RegistryClient(
        host,
        reference=reference,
        credentials=options.credentials,
        plain_http=options.plain_http,
        tls_verify=options.tls_verify,
        timeout=options.timeout,
        deadline=options.deadline,
    )


def repository_container(repository: ChartRepository, tag: str) -> Container:
    """oras's name for `repository:tag`."""
    # Built from parts: oras's own parser would read a dotted first path component as a host.
    container = Container(f"{repository.chart_name}:{tag}", registry=repository.host)
    container.namespace = repository.namespace
    return container


def upload(
    client: RegistryClient, container: Container, blob: layout.Descriptor, data: bytes
) -> None:
    with tempfile.TemporaryDirectory(prefix="bundler-blob-") as scratch:
        path = Path(scratch, "blob")
        path.write_bytes(data)
        client.upload_blob(str(path), container, blob.to_json())


def tag_exists(client: RegistryClient, tag: ChartTag) -> bool:
    container = repository_container(tag.repository, tag.tag)
    response = client.do_request(
        f"{client.prefix}://{container.manifest_url()}",
        "HEAD",
        headers={"Accept": ", ".join(layout.ACCEPTED_MANIFEST_MEDIA_TYPES)},
    )
    return response.status_code != 404


def _held_layer(client: RegistryClient, tag: ChartTag) -> str | None:
    """The digest of the chart layer the tag holds, a description when it holds something that
    is not a chart, or None when there is no such tag."""
    if not tag_exists(client, tag):
        return None
    try:
        return _fetch_manifest(client, tag).layer.digest
    except RegistryAnswerError as err:
        return f"an artifact that is not this kind of chart ({err.message})"


def push_chart(
    archive: ChartArchive,
    location: OciLocation,
    options: RegistryOptions,
    *,
    force: bool = False,
    created: str | None = None,
) -> PushedChart:
    """Push a chart archive into `location`; return the tag written and the manifest digest.
    TagTakenError when the tag holds a different chart, unless `force`; `created` is the
    `org.opencontainers.image.created` annotation (RFC 3339), left out when None."""
    metadata = archive.metadata
    tag = location.repository(metadata.name).tagged(version_to_tag(metadata.version))
    container = repository_container(tag.repository, tag.tag)
    config_data = metadata.config_json()
    config = layout.Descriptor.of(layout.CONFIG_MEDIA_TYPE, config_data)
    layer = layout.Descriptor.of(layout.CHART_LAYER_MEDIA_TYPE, archive.data)
    with registry_client(location.host, tag.url, options) as client:
        held = _held_layer(client, tag)
        replaced = held if held is not None and held != layer.digest else None
        if replaced is not None and not force:
            raise TagTakenError(
                f"the tag already holds a different chart ({_short(replaced)}; this one is "
                f"{_short(layer.digest)}): version {metadata.version} would name two charts, and "
                "clusters pinned to it would get the new one without a rollout; give the chart "
                "a new version (or --version), or pass --force to replace it",
                obj=tag.url,
            )
        upload(client, container, config, config_data)
        upload(client, container, layer, archive.data)
        manifest = layout.chart_manifest(metadata, config, layer, created)
        digest = upload_manifest(client, tag, manifest)
    return PushedChart(reference=tag, digest=digest, replaced=replaced)


def upload_manifest(client: RegistryClient, tag: ChartTag, manifest: dict[str, Any]) -> str:
    """Put `manifest` under `tag`; its digest, as the registry reports it or as sent."""
    response = client.upload_manifest(manifest, repository_container(tag.repository, tag.tag))
    body = response.request.body or b""
    sent = body.encode() if isinstance(body, str) else body
    digest = response.headers.get("Docker-Content-Digest") or (
        f"sha256:{hashlib.sha256(sent).hexdigest()}"
    )
    return checked_digest(digest, "the digest", tag.url)


def _short(digest: str) -> str:
    return f"layer {digest[:19]}..." if digest.startswith("sha256:") else digest


@dataclass(frozen=True)
class ChartManifest:
    """A tag's manifest, checked to be a Helm chart's: its digest and the chart layer."""

    digest: str
    layer: layout.Descriptor


def fetch_manifest(client: RegistryClient, tag: ChartTag, kind: str) -> tuple[str, Any]:
    """The digest and the decoded JSON of a tag's manifest (`kind`, 'a Helm chart', names what
    was expected when it is not JSON)."""
    container = repository_container(tag.repository, tag.tag)
    response = client.do_request(
        f"{client.prefix}://{container.manifest_url()}",
        "GET",
        headers={"Accept": ", ".join(layout.ACCEPTED_MANIFEST_MEDIA_TYPES)},
        stream=True,
    )
    body = read_body(response, MAX_METADATA_BYTES, client.transfer("the manifest"))
    try:
        manifest = json.loads(body)
    except (ValueError, RecursionError) as err:
        raise RegistryAnswerError(f"not {kind}: the manifest is not JSON", obj=tag.url) from err
    digest = response.headers.get("Docker-Content-Digest") or (
        f"sha256:{hashlib.sha256(body).hexdigest()}"
    )
    return checked_digest(digest, "the manifest digest", tag.url), manifest


def check_layer_size(layer: layout.Descriptor, cap: int, what: str, reference: str) -> None:
    """RegistryAnswerError when a layer's descriptor declares more than `cap` bytes."""
    if layer.size > cap:
        raise RegistryAnswerError(
            f"{what} is over the {size_text(cap)} cap: its descriptor declares "
            f"{size_text(layer.size)}",
            obj=reference,
        )


def _fetch_manifest(client: RegistryClient, tag: ChartTag) -> ChartManifest:
    digest, manifest = fetch_manifest(client, tag, "a Helm chart")
    layer = layout.chart_layer(manifest, reference=tag.url)
    check_layer_size(layer, MAX_CHART_BYTES, "the chart layer", tag.url)
    return ChartManifest(digest=digest, layer=layer)


def check_chart(tag: ChartTag, options: RegistryOptions) -> ChartManifest:
    """The manifest of a tagged chart, without its layer: RegistryAnswerError when the artifact
    is not a Helm chart or its layer is over the chart cap."""
    with registry_client(tag.repository.host, tag.url, options) as client:
        return _fetch_manifest(client, tag)


def pull_chart(tag: ChartTag, options: RegistryOptions) -> PulledChart:
    """Fetch one tagged chart; RegistryAnswerError when the artifact is not a Helm chart."""
    with registry_client(tag.repository.host, tag.url, options) as client:
        manifest = _fetch_manifest(client, tag)
        data = fetch_layer(client, tag, manifest.layer, "the chart layer")
    chart_yaml = read_chart_yaml(data, source=tag.url)
    return PulledChart(reference=tag, digest=manifest.digest, archive=data, chart_yaml=chart_yaml)


def fetch_layer(
    client: RegistryClient, tag: ChartTag, layer: layout.Descriptor, what: str
) -> bytes:
    """The bytes of `layer`, read within its declared size and checked against its digest."""
    container = repository_container(tag.repository, tag.tag)
    response = client.get_blob(container, layer.digest, stream=True)
    # The descriptor's size is the most the layer may have: a longer body is not that blob.
    data = read_body(response, layer.size, client.transfer(what))
    if not layer.matches(data):
        raise TransientError(
            f"{what} does not match its digest {layer.digest} (truncated download?)",
            obj=tag.url,
        )
    return data


def list_tags(
    repository: ChartRepository,
    options: RegistryOptions,
    *,
    page_size: int | None = None,
    max_tags: int = MAX_TAGS,
) -> list[str]:
    """Every tag of a repository, as the registry lists them (all pages, `page_size` tags a page
    when given: `?n=`; the registry's own page size otherwise), at most `max_tags` of them.

    The answer is checked, as any answer from a server: a body that is not a tag list, more tags
    than `max_tags`, or pages that never end, are errors naming the repository rather than a
    crash or a hang.
    """
    tags: list[str] = []
    spent = 0
    with registry_client(repository.host, repository.url, options) as client:
        url = (
            f"{client.prefix}://{repository_container(repository, 'latest').tags_url(N=page_size)}"
        )
        for _ in range(MAX_TAG_PAGES):
            response = client.do_request(url, "GET", headers=client.headers, stream=True)
            body = read_body(
                response, MAX_TAG_LIST_BYTES, client.transfer("the tag list"), spent=spent
            )
            spent += len(body)
            tags.extend(_page_tags(body, repository.url))
            if len(tags) > max_tags:
                raise RegistryAnswerError(
                    f"the registry lists more than {max_tags} tags", obj=repository.url
                )
            following = response.links.get("next", {}).get("url")
            if not following:
                return tags
            url = _next_page(url, following, repository.url)
    raise RegistryAnswerError(
        f"the registry lists the tags on more than {MAX_TAG_PAGES} pages", obj=repository.url
    )


def _next_page(url: str, link: str, reference: str) -> str:
    """The next page of a tag list: `link` (a `Link: <...>; rel="next"`) read against `url`,
    on the same scheme, host and port only, where the credentials sent are meant to go."""
    following = urllib.parse.urljoin(url, link)
    if not same_origin(following, url):
        scheme, host, port = origin(following)
        raise RegistryAnswerError(
            f"the registry's next page of the tag list is on {scheme}://{host}:{port}, not on "
            f"the registry: not followed (it would be sent the registry's credentials)",
            obj=reference,
        )
    return following


def _page_tags(page: bytes, reference: str) -> list[str]:
    """The tags of one page of `GET /v2/<name>/tags/list`: `{"name": ..., "tags": [...]}`."""
    try:
        body = json.loads(page)
    except (ValueError, RecursionError):
        raise RegistryAnswerError("the registry's tag list is not JSON", obj=reference) from None
    tags = body.get("tags") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(tags, list | None):
        raise RegistryAnswerError(
            'the registry\'s tag list is not an object with a "tags" list', obj=reference
        )
    if not all(isinstance(tag, str) for tag in tags or []):
        raise RegistryAnswerError(
            "the registry's tag list holds tags that are not text", obj=reference
        )
    return checked_tags(tags or [], reference)
