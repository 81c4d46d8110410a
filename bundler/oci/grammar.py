"""What a registry answers, checked against the OCI grammar before bundler uses it.

A Bundle author chooses the registry, and what it lists reaches values (`images.web.tag`), the
Bundle's status and, through `bundler images update`, files in git. So a tag or a digest read from
a registry is used only when it is one by the grammar of the OCI distribution and image specs:
- a tag: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}` (distribution spec, "Pulling manifests");
- a digest: `algorithm ":" encoded`, the algorithm `[a-z0-9]+([+._-][a-z0-9]+)*` and the encoded
  part `[a-zA-Z0-9=_-]+` (image spec, descriptor.md), with the registered algorithms held to their
  own form: `sha256` 64 and `sha512` 128 lowercase hex digits; at most 1024 characters in all.

Anything else is a RegistryAnswerError naming the reference; the offending text is quoted
(escaped, cut at 64 characters), never passed on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeGuard
from urllib.parse import urlsplit

from bundler.errors import RegistryAnswerError

TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_DIGEST = re.compile(r"([a-z0-9]+(?:[+._-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)")
_REGISTERED = {"sha256": re.compile(r"[a-f0-9]{64}"), "sha512": re.compile(r"[a-f0-9]{128}")}
MAX_DIGEST_LENGTH = 1024
_QUOTED = 64
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_tag(text: object) -> TypeGuard[str]:
    return isinstance(text, str) and TAG.fullmatch(text) is not None


def is_digest(text: object) -> TypeGuard[str]:
    if not isinstance(text, str) or len(text) > MAX_DIGEST_LENGTH:
        return False
    match = _DIGEST.fullmatch(text)
    if match is None:
        return False
    registered = _REGISTERED.get(match.group(1))
    return registered is None or registered.fullmatch(match.group(2)) is not None


def quoted(text: str) -> str:
    """`text` for a message: escaped, and cut to 64 characters."""
    return repr(text[:_QUOTED]) + ("..." if len(text) > _QUOTED else "")


def checked_tags(tags: Iterable[str], reference: str) -> list[str]:
    """`tags`, all of them OCI tags; else RegistryAnswerError naming how many are not."""
    listed = list(tags)
    bad = [tag for tag in listed if not is_tag(tag)]
    if bad:
        raise RegistryAnswerError(
            f"the registry lists {len(bad)} tag(s) that are not OCI tags (first: "
            f"{quoted(bad[0])}); a tag is up to 128 letters, digits, '_', '.' or '-'",
            obj=reference,
        )
    return listed


def checked_digest(digest: str, what: str, reference: str) -> str:
    """`digest` when it is an OCI digest; else RegistryAnswerError naming `what` it is."""
    if not is_digest(digest):
        raise RegistryAnswerError(
            f"{what} {quoted(digest)} is not an OCI digest (ALGORITHM:HEX, e.g. sha256:...)",
            obj=reference,
        )
    return digest


def origin(url: str) -> tuple[str, str, int | None]:
    """The scheme, host (lowercase) and port (the scheme's default when none is written)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme)


def same_origin(first: str, second: str) -> bool:
    """Whether two URLs share scheme, host and port: credentials for one are for the other."""
    return origin(first) == origin(second)
