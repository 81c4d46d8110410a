"""Deterministic Kubernetes names: DNS-1123 checks, cluster namespaces and shortened object names.

Every name made here is a pure function of its inputs, so the manager computes the same name on
every pass and in every replica. Where a readable name does not fit, it is truncated and a hash of
the full identity is appended: the readable part may be cut, the hash never is.
"""

from __future__ import annotations

import hashlib
import re

from bundler.errors import InvalidInputError

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
HELM_RELEASE_NAME_MAX = 53

# Hex digits of sha256 kept in generated names: 48 bits, collision-free in any realistic fleet.
HASH_LENGTH = 12

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(_LABEL)
_SUBDOMAIN_RE = re.compile(rf"{_LABEL}(\.{_LABEL})*")

_CLUSTER_NAMESPACE_PREFIX = "cluster-"


def is_dns1123_label(s: str) -> bool:
    """A DNS-1123 label: <= 63 lowercase alphanumerics or '-', starting and ending alphanumeric."""
    return len(s) <= DNS1123_LABEL_MAX and _LABEL_RE.fullmatch(s) is not None


def is_dns1123_subdomain(s: str) -> bool:
    """A DNS-1123 subdomain: at most 253 characters, dot-separated DNS-1123 labels."""
    return len(s) <= DNS1123_SUBDOMAIN_MAX and _SUBDOMAIN_RE.fullmatch(s) is not None


def is_helm_release_name(s: str) -> bool:
    """Helm's own rule for release names (`helm install` refuses others): a DNS-1123 subdomain of
    at most 53 characters, dots allowed. The same characters as a Bundle's name, which is the
    release name when `spec.helm.releaseName` is unset (shortened with a hash beyond 53)."""
    return len(s) <= HELM_RELEASE_NAME_MAX and is_dns1123_subdomain(s)


def name_hash(key: str) -> str:
    """The first HASH_LENGTH hex digits of sha256(key)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def cluster_namespace(workspace: str, cluster: str) -> str:
    """`cluster-<workspace>-<name>-<hash>` on the management cluster for one Cluster.

    At most 63 characters and a DNS-1123 label. The hash (of "workspace/name") makes it distinct
    for distinct (workspace, cluster) pairs even when the readable part has to be truncated, and
    when different pairs read alike (`a-b`/`c` and `a`/`b-c`). Dots of the cluster name become '-'.
    """
    if not is_dns1123_label(workspace):
        raise InvalidInputError(
            f"workspace {workspace!r} is not a DNS-1123 label", field="metadata.namespace"
        )
    if not is_dns1123_subdomain(cluster):
        raise InvalidInputError(
            f"cluster name {cluster!r} is not a DNS-1123 subdomain", field="metadata.name"
        )
    readable = f"{_CLUSTER_NAMESPACE_PREFIX}{workspace}-{cluster.replace('.', '-')}"
    return _with_hash(readable, name_hash(f"{workspace}/{cluster}"), DNS1123_LABEL_MAX)


def shorten_name(name: str, max_len: int) -> str:
    """`name` if it fits in `max_len`, else a truncation of it plus `-<hash of name>`.

    A valid DNS-1123 label (or subdomain) stays one: the cut never leaves '-' or '.' before the
    hash. Used for HelmRelease names (<= 53, Helm's limit) and object names (<= 63).
    """
    if len(name) <= max_len:
        return name
    return _with_hash(name, name_hash(name), max_len)


def bundle_deployment_name(bundle_namespace: str, bundle_name: str) -> str:
    """The BundleDeployment's name for a Bundle, inside a cluster namespace; a DNS-1123 label.

    A cluster namespace only holds BundleDeployments of its own workspace's Bundles, so the bundle
    name alone is unique there and is used as-is whenever it is already a label. A name that is not
    (too long, or dotted: Bundle names are subdomains) gets a hash of "namespace/name" appended, so
    `a.b` and `a-b` never meet on the same name.
    """
    if is_dns1123_label(bundle_name):
        return bundle_name
    readable = bundle_name.replace(".", "-")
    return _with_hash(readable, name_hash(f"{bundle_namespace}/{bundle_name}"), DNS1123_LABEL_MAX)


def _with_hash(readable: str, digest: str, max_len: int) -> str:
    """`<readable, cut to fit>-<digest>`, with no '-' or '.' left dangling at the joint."""
    room = max_len - len(digest) - 1
    if room < 1:
        raise ValueError(f"max_len {max_len} leaves no room for a readable part before the hash")
    head = readable[:room].rstrip("-.")
    return f"{head}-{digest}" if head else digest
