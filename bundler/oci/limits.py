"""Byte caps on what a registry or a Helm repository sends, and bodies read within them.

A Bundle author chooses the server, so nothing it sends is read unbounded. The caps follow the
projects bundler interoperates with:
- a chart archive, and the bytes it decompresses to: 100 MiB, Helm's `MaxDecompressedChartSize`
  (helm pkg/chart/loader/archive.go, since Helm 3.17.3); a chart's Chart.yaml: 1 MiB;
- an OCI manifest, a token answer, an error body: 4 MiB, distribution's `maxManifestBodySize`
  (distribution registry/handlers/manifests.go) and oras-go's `defaultMaxMetadataBytes`
  (registry/remote), which Helm's registry client inherits;
- a tag list: 4 MiB for all its pages together (oras-go caps each tag-list answer at 4 MiB);
- a repository's index.yaml: 50 MiB, Flux source-controller's `MaxIndexSize`
  (internal/helm/helm.go); large public indexes (Bitnami's) are 15-30 MB.

`read_body` checks the declared size (Content-Length) before reading anything, then streams the
body, stopping at the cap; a gzip `Content-Encoding` is decoded here, with the cap applying to the
decoded bytes, so a small bomb cannot expand past it. Over a cap is a `RegistryAnswerError` (only a
change on the server fixes it); a connection that breaks or a deadline that passes while reading is
a TransientError.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import requests
import urllib3.exceptions

from bundler.errors import RegistryAnswerError, TransientError
from bundler.oci.deadline import Deadline
from bundler.oci.grammar import same_origin

MiB = 1 << 20
MAX_CHART_BYTES = 100 * MiB
MAX_CHART_YAML_BYTES = 1 * MiB
MAX_METADATA_BYTES = 4 * MiB
MAX_TAG_LIST_BYTES = 4 * MiB
MAX_INDEX_BYTES = 50 * MiB
CHUNK_BYTES = 64 * 1024
MAX_REDIRECTS = 10
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_GZIP = zlib.MAX_WBITS | 16
_BROKEN = (requests.RequestException, urllib3.exceptions.HTTPError, OSError)


def size_text(size: int) -> str:
    """`100 MiB`, `4 MiB`, `512 bytes`: caps and sizes as messages show them."""
    if size >= MiB and size % MiB == 0:
        return f"{size // MiB} MiB"
    if size >= MiB:
        return f"{size / MiB:.1f} MiB"
    return f"{size} bytes"


@dataclass(frozen=True)
class Transfer:
    """What a body is, for messages: `what` ('the manifest'), the server and the reference."""

    what: str
    server: str
    reference: str
    deadline: Deadline

    def too_large(self, cap: int, detail: str = "") -> RegistryAnswerError:
        return RegistryAnswerError(
            f"{self.what} from {self.server} is over the {size_text(cap)} cap{detail}",
            obj=self.reference,
        )

    def deadline_passed(self) -> TransientError:
        return TransientError(
            f"{self.server} did not finish sending {self.what} within the "
            f"{self.deadline.seconds:g}s deadline of this operation",
            obj=self.reference,
        )

    def broken(self, error: Exception) -> TransientError:
        if self.deadline.expired:
            return self.deadline_passed()
        return TransientError(
            f"the connection to {self.server} broke while reading {self.what} "
            f"({type(error).__name__})",
            obj=self.reference,
        )


def send(
    session: requests.Session,
    method: str,
    url: str,
    transfer: Transfer,
    *,
    headers: Mapping[str, str],
    timeout: float,
    verify: bool | str = True,
    **request: Any,
) -> requests.Response:
    """`method url` through `session`'s adapter, streamed, following redirects of GET and HEAD
    within the deadline; each request waits at most `timeout` (less when less time is left), and
    offers only the gzip encoding.

    The adapter is called directly: `Session.send` reads the whole body of a redirecting answer,
    even with redirects off (to prepare `Response.next`)."""
    # Only what read_body decodes: requests would also offer deflate (and br, zstd if installed).
    sent = {"Accept-Encoding": "gzip", **headers}
    for _ in range(MAX_REDIRECTS + 1):
        prepared = session.prepare_request(requests.Request(method, url, headers=sent, **request))
        settings = session.merge_environment_settings(prepared.url, {}, False, verify, None)
        response = session.get_adapter(url).send(
            prepared,
            stream=True,
            timeout=transfer.deadline.timeout(timeout),
            verify=verify if settings["verify"] is None else settings["verify"],
            cert=settings["cert"],
            proxies=settings["proxies"],
        )
        location = response.headers.get("Location")
        if method not in ("GET", "HEAD") or response.status_code not in REDIRECT_STATUSES:
            return response
        response.close()
        if not location:
            break
        following = urljoin(url, location)
        if not same_origin(following, url):
            sent = {k: v for k, v in sent.items() if k.lower() != "authorization"}
            request.pop("auth", None)
        url = following
    raise RegistryAnswerError(
        f"{transfer.server} redirects {transfer.what} more than {MAX_REDIRECTS} times, or "
        "without a Location",
        obj=transfer.reference,
    )


def declared_length(response: requests.Response) -> int | None:
    text = response.headers.get("Content-Length", "")
    return int(text) if text.isdigit() else None


def read_body(
    response: requests.Response, cap: int, transfer: Transfer, *, spent: int = 0
) -> bytes:
    """The body of a streamed `response`, at most `cap - spent` bytes once decoded (`spent`: what
    earlier answers of the same cap took, as the pages of a tag list); closes it."""
    try:
        declared = declared_length(response)
        if declared is not None and spent + declared > cap:
            raise transfer.too_large(cap, f": it declares {size_text(declared)}")
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip"):
            return _gunzip(_chunks(response, cap, transfer, spent), cap, transfer, spent)
        if encoding not in ("", "identity"):
            raise RegistryAnswerError(
                f"{transfer.what} from {transfer.server} has an unsupported Content-Encoding "
                f"{encoding!r}",
                obj=transfer.reference,
            )
        return b"".join(_chunks(response, cap, transfer, spent))
    finally:
        response.close()


def _chunks(
    response: requests.Response, cap: int, transfer: Transfer, spent: int
) -> Iterator[bytes]:
    """The raw bytes of the body as they arrive; more than `cap - spent` of them is an error."""
    received = 0
    try:
        for chunk in response.raw.stream(CHUNK_BYTES, decode_content=False):
            received += len(chunk)
            if spent + received > cap:
                raise transfer.too_large(cap)
            if transfer.deadline.expired:
                raise transfer.deadline_passed()
            yield chunk
    except _BROKEN as error:
        raise transfer.broken(error) from None
    # A socket shut down at the deadline may read as a quiet end of the body.
    if transfer.deadline.expired:
        raise transfer.deadline_passed()
    declared = declared_length(response)
    if declared is not None and received < declared:
        raise transfer.broken(EOFError(f"{received} of {declared} bytes"))


def _gunzip(chunks: Iterator[bytes], cap: int, transfer: Transfer, spent: int) -> bytes:
    """Decode gzip without ever holding more than `cap - spent` decoded bytes."""
    decoder = zlib.decompressobj(_GZIP)
    parts: list[bytes] = []
    produced = spent
    try:
        for chunk in chunks:
            pending = chunk
            while pending and not decoder.eof:
                out = decoder.decompress(pending, cap + 1 - produced)
                produced += len(out)
                if produced > cap:
                    raise transfer.too_large(cap, " once decompressed")
                parts.append(out)
                pending = decoder.unconsumed_tail
    except zlib.error as error:
        raise RegistryAnswerError(
            f"{transfer.what} from {transfer.server} is not valid gzip ({error})",
            obj=transfer.reference,
        ) from None
    if not decoder.eof:
        raise transfer.broken(EOFError("the gzip stream ends early"))
    return b"".join(parts)
