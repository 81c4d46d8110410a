"""Fleet's names for the bundles of a GitRepo, so imported Bundles keep them.

Fleet names the bundle of the directory PATH of GitRepo NAME `NAME-PATH` with every `/` written as
`-`, cleaned up to a Helm release name (Fleet's `names.HelmReleaseName`): lower case, characters
other than letters, digits and `-` replaced, with an md5 suffix when the cleaning changed the text
(so two paths differing in case or punctuation stay apart), and shortened to 53 characters with an
md5 suffix. The same name is the default Helm release name, and what other bundles' `dependsOn`
name, so the import keeps it exactly.
"""

from __future__ import annotations

import hashlib
import posixpath
import re

HELM_RELEASE_NAME_MAX = 53
_DISALLOWED = re.compile(r"[^a-zA-Z0-9-]+")
_MULTI_DASH = re.compile(r"-+")
_RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_HASH_LENGTH = 5


def _hex(text: str, length: int) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()[:length]


def limit(text: str, count: int) -> str:
    """`text`, shortened to `count` characters with `-` and a 5-character hash when longer
    (Fleet's `names.Limit`)."""
    if len(text) <= count:
        return text
    separator = "-"
    if count <= _HASH_LENGTH + len(separator):
        return text[:count]
    kept = count - _HASH_LENGTH - len(separator)
    if text[kept - 1] == separator:
        separator = ""
    return f"{text[:kept]}{separator}{_hex(text, _HASH_LENGTH)}"


def helm_release_name(text: str) -> str:
    """Fleet's `names.HelmReleaseName`: a DNS label and Helm release name made from `text`."""
    original = text
    text = text.replace("/", "-")
    if text != text.lower() or _DISALLOWED.search(text):
        text = f"{text}-{_hex(text, 8)}"
    text = _DISALLOWED.sub("-", text.lower())
    text = _MULTI_DASH.sub("-", text).strip("-")
    if _RELEASE_NAME.fullmatch(text) and _DNS_LABEL.fullmatch(text):
        return limit(text, HELM_RELEASE_NAME_MAX)
    return _hex(original, 24)


def bundle_name(gitrepo: str, path: str) -> str:
    """The name Fleet gives the bundle of directory `path` (relative to the repository's root,
    `.` for the root) of GitRepo `gitrepo`."""
    joined = posixpath.normpath(posixpath.join(gitrepo, path)) if path not in ("", ".") else gitrepo
    return helm_release_name(joined)
