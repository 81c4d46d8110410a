"""`valuesFrom` in remote mode: copies of the downstream objects where helm-controller reads them.

helm-controller reads a HelmRelease's `valuesFrom` ConfigMaps and Secrets from the HelmRelease's
own namespace on the cluster that reconciles it. In pull mode that is the agent's namespace on the
downstream cluster, so the objects are simply created there. In remote mode the HelmRelease lives
in the cluster namespace on the management cluster, where nobody creates them; bundler keeps one
meaning for `valuesFrom` in both modes (the object lives on the downstream cluster, in the agent
namespace), so the remote agent reads each object there and writes a copy beside the HelmRelease,
which then names the copy. A mode handover changes nothing for the user.

Copies are Secrets whatever the source (a ConfigMap's text is base64-encoded), named for the bundle
and the source so two bundles never share one, and bounded in size: a copy holds what Helm would
read from the source, no more than COPY_MAX_BYTES.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from bundler.api.helm import ValuesKind
from bundler.core.naming import DNS1123_SUBDOMAIN_MAX, shorten_name

# Kubernetes stores objects of up to about 1.5 MiB; values beyond 1 MiB are no values.
COPY_MAX_BYTES = 1024 * 1024

SECRET_API_VERSION = "v1"


class CopyTooLargeError(ValueError):
    """The source object holds more than COPY_MAX_BYTES."""


def copy_name(release_object: str, kind: str, name: str) -> str:
    """The copy's name: the HelmRelease's name, the source's kind and name."""
    return shorten_name(f"{release_object}-{kind.lower()}-{name}", DNS1123_SUBDOMAIN_MAX)


def values_copy(
    source: Mapping[str, Any],
    kind: str,
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
) -> dict[str, Any]:
    """A Secret holding `source`'s data (a Secret's as it is, a ConfigMap's base64-encoded)."""
    data: dict[str, str] = {}
    if kind == ValuesKind.SECRET:
        data.update(_strings(source.get("data")))
    else:
        for key, text in _strings(source.get("data")).items():
            data[key] = base64.b64encode(text.encode()).decode()
        data.update(_strings(source.get("binaryData")))
    size = sum(len(key) + len(value) for key, value in data.items())
    if size > COPY_MAX_BYTES:
        raise CopyTooLargeError(f"holds {size} bytes, more than the {COPY_MAX_BYTES} copied")
    return {
        "apiVersion": SECRET_API_VERSION,
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "annotations": dict(annotations),
        },
        "type": "Opaque",
        "data": data,
    }


def _strings(found: object) -> dict[str, str]:
    if not isinstance(found, Mapping):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, str)}


def pointed_at_copies(
    values_from: Sequence[Mapping[str, Any]], copies: Mapping[tuple[str, str], str]
) -> list[dict[str, Any]]:
    """`valuesFrom` entries naming the copies (by the source's kind and name) instead."""
    pointed = []
    for entry in values_from:
        copied = copies.get((entry["kind"], entry["name"]))
        pointed.append(
            dict(entry) if copied is None else {**entry, "kind": "Secret", "name": copied}
        )
    return pointed
