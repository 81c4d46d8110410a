"""`valuesFrom` objects where helm-controller reads them: copies, their names, and the entries the
HelmRelease gets.

helm-controller reads a HelmRelease's `valuesFrom` ConfigMaps and Secrets from the HelmRelease's
own namespace on the cluster that reconciles it: the agent's namespace downstream in pull mode, the
cluster namespace on the management cluster in remote mode. Two kinds of objects get there:

- Downstream objects (the default, Flux's own meaning): they live on the downstream cluster, in the
  agent namespace, in both modes. In pull mode they already are where helm-controller reads them;
  in remote mode the remote agent reads each one there and writes a copy beside the HelmRelease,
  named `<release>-<kind>-<name>` (copy_name), so a mode handover changes nothing for the user.
- Management objects (`source: Management`): they live in the Bundle's workspace. The manager
  delivers a copy into the cluster namespace, named `<release>-mgmt-<kind>-<name>-<digest>`
  (management_copy_name), and records its digest in the options (delivered_values): a change of
  the data is a new name, so new options, a new deploymentID and a rollout like any values change,
  while the old deploymentID's options still read the old copy. In remote mode the HelmRelease
  reads that copy where it is; in pull mode the agent writes it, under the same name, next to the
  HelmRelease.

Copies are Secrets whatever the source (a ConfigMap's text is base64-encoded), named for the bundle
and the source so two bundles never share one, and bounded in size: a copy holds the source's data,
no more than COPY_MAX_BYTES. release_values_from gives the HelmRelease entries naming the copies,
with Flux's fields only.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from bundler.api.helm import ValuesKind, ValuesSource
from bundler.core.deployment_id import canonical_json
from bundler.core.naming import DNS1123_SUBDOMAIN_MAX, shorten_name

# Kubernetes stores objects of up to about 1.5 MiB; values beyond 1 MiB are no values.
COPY_MAX_BYTES = 1024 * 1024
# Hex digits of the data's digest in a management copy's name.
DIGEST_IN_NAME = 10

SECRET_API_VERSION = "v1"
DIGEST_PREFIX = "sha256:"


class CopyTooLargeError(ValueError):
    """The source object holds more than COPY_MAX_BYTES."""


def copy_name(release_object: str, kind: str, name: str) -> str:
    """A downstream object's copy (remote mode): the HelmRelease's name, the source's kind and
    name."""
    return shorten_name(f"{release_object}-{kind.lower()}-{name}", DNS1123_SUBDOMAIN_MAX)


def management_copy_name(release_object: str, kind: str, name: str, digest: str) -> str:
    """A management object's copy: the HelmRelease's name, `mgmt`, the source's kind and name,
    and the first hex digits of its data's digest."""
    hexdigits = digest.removeprefix(DIGEST_PREFIX)[:DIGEST_IN_NAME]
    readable = f"{release_object}-mgmt-{kind.lower()}-{name}-{hexdigits}"
    return shorten_name(readable, DNS1123_SUBDOMAIN_MAX)


def copy_data(source: Mapping[str, Any], kind: str) -> dict[str, str]:
    """A copy's `data`: a Secret's as it is, a ConfigMap's base64-encoded (its binaryData too);
    CopyTooLargeError beyond COPY_MAX_BYTES."""
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
    return data


def data_digest(data: Mapping[str, str]) -> str:
    """`sha256:<hex>` of a copy's data (canonical JSON): equal data, equal digest."""
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(dict(data)).encode()).hexdigest()


def values_copy(
    source: Mapping[str, Any],
    kind: str,
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
) -> dict[str, Any]:
    """A Secret holding `source`'s data (copy_data)."""
    return secret_of(copy_data(source, kind), name, namespace, labels, annotations)


def secret_of(
    data: Mapping[str, str],
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
) -> dict[str, Any]:
    """An Opaque Secret of `data`, as a copy is written."""
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
        "data": dict(data),
    }


def _strings(found: object) -> dict[str, str]:
    if not isinstance(found, Mapping):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, str)}


def is_management(entry: Mapping[str, Any]) -> bool:
    """Whether a valuesFrom entry (wire JSON) names an object of the Bundle's workspace."""
    return entry.get("source") == ValuesSource.MANAGEMENT.value


def delivered_values(
    entries: Sequence[Mapping[str, Any]],
    digests: Mapping[tuple[str, str], str],
    release_object: str,
) -> list[dict[str, Any]] | None:
    """options.managementValues: one entry per management object of `entries` (valuesFrom as
    wire JSON) that `digests` holds, by (kind, name), in the order first named; None when there
    is none. An object without a digest is an optional one that does not exist."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        key = (str(entry["kind"]), str(entry["name"]))
        digest = digests.get(key)
        if not is_management(entry) or digest is None or key in found:
            continue
        found[key] = {
            "kind": key[0],
            "name": key[1],
            "digest": digest,
            "secretName": management_copy_name(release_object, key[0], key[1], digest),
        }
    return list(found.values()) or None


def release_values_from(
    entries: Sequence[Mapping[str, Any]],
    delivered: Sequence[Mapping[str, Any]],
    release_object: str,
    *,
    remote: bool,
) -> list[dict[str, Any]]:
    """The HelmRelease's valuesFrom, in order, with Flux's fields only: a management entry names
    its copy (`delivered`: options.managementValues; left out when not delivered, an optional
    object that does not exist), and in remote mode a downstream entry names its copy beside
    the HelmRelease."""
    copies = {(d["kind"], d["name"]): d["secretName"] for d in delivered}
    found = []
    for entry in entries:
        flux = {key: value for key, value in entry.items() if key != "source"}
        if is_management(entry):
            copied = copies.get((entry["kind"], entry["name"]))
            if copied is None:
                continue
            flux.update(kind=ValuesKind.SECRET.value, name=copied)
        elif remote:
            copied = copy_name(release_object, entry["kind"], entry["name"])
            flux.update(kind=ValuesKind.SECRET.value, name=copied)
        found.append(flux)
    return found
