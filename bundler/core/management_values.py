"""Which objects of a workspace may be delivered to clusters as values (`helm.valuesFrom` entries
with `source: Management`).

The manager copies such an object into the namespace of every cluster the Bundle targets, where
that cluster's agent (and, in pull mode, everyone who can read the agent's namespace downstream)
can read it. A Bundle's author need not be able to read the workspace's Secrets, so naming one
must not be a way to reach it: an object is delivered only when whoever keeps it says so, and
never when it holds credentials, whoever labelled it (design §8):
- labelled `bundler.dev/deliver: "true"`;
- a ConfigMap, or a Secret of type `Opaque` (Helm values; other types hold credentials or keys);
- never the kubeconfig Secret of a Cluster of the workspace, a Cluster API Secret (by type or by
  its `cluster.x-k8s.io/cluster-name` label), a ServiceAccount or bootstrap token
  (bundler.core.credentials, the same table as for registry credentials), registry credentials
  (they reach clusters through `helm.secretRef` only), nor a Secret bundler manages (labelled
  `bundler.dev/managed-by`: agent tokens, bootstrap values, copies).

Pure: the object as the API returns it in, the reason for a refusal (or None) out. The reason names
the object's type and labels, never its data. The size bound is the copy's
(bundler.core.flux.values_copies.COPY_MAX_BYTES), checked where the copy is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.helm import HelmOptions, ValuesKind, ValuesReference, ValuesSource
from bundler.core.credentials import (
    LABEL_REGISTRY_CREDENTIALS,
    OPAQUE,
    cluster_credentials_refusal,
    credentials_refusal,
    secret_type,
)
from bundler.core.labels import LABEL_MANAGED_BY

LABEL_DELIVER = "bundler.dev/deliver"
DELIVER_MARK = "true"
# Cluster API labels every Secret it writes for a cluster (kubeconfig, certificates) with it.
LABEL_CAPI_CLUSTER = "cluster.x-k8s.io/cluster-name"

RULE = (
    f"only ConfigMaps and Secrets of type {OPAQUE} labelled {LABEL_DELIVER}={DELIVER_MARK} are "
    "delivered to clusters, never a Cluster's kubeconfig, a Cluster API Secret, a ServiceAccount "
    "or bootstrap token, registry credentials or a Secret bundler manages"
)


def delivery_refusal(
    obj: Mapping[str, Any], kind: ValuesKind, kubeconfig_of: Mapping[str, str] | None = None
) -> str | None:
    """Why the workspace object `obj` (of `kind`) may not be delivered to clusters, or None when
    it may. `kubeconfig_of` maps the kubeconfig Secret names of the workspace's Clusters to those
    Clusters."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if kind is ValuesKind.SECRET:
        why = _secret_refusal(obj, labels, kubeconfig_of)
        if why is not None:
            return why
    if labels.get(LABEL_DELIVER) != DELIVER_MARK:
        return f"it is not labelled {LABEL_DELIVER}={DELIVER_MARK}"
    return None


def _secret_refusal(
    secret: Mapping[str, Any], labels: Mapping[str, Any], kubeconfig_of: Mapping[str, str] | None
) -> str | None:
    never = cluster_credentials_refusal(secret, kubeconfig_of)
    if never is not None:
        return never
    if LABEL_CAPI_CLUSTER in labels:
        return f"it is a Cluster API Secret (labelled {LABEL_CAPI_CLUSTER})"
    if LABEL_MANAGED_BY in labels:
        return f"it is managed by bundler (labelled {LABEL_MANAGED_BY})"
    if credentials_refusal(secret, kubeconfig_of) is None:
        kind = secret_type(secret)
        labelled = kind == OPAQUE
        what = f"labelled {LABEL_REGISTRY_CREDENTIALS}" if labelled else f"of type {kind}"
        return f"it is registry credentials ({what}), which only helm.secretRef delivers"
    kind = secret_type(secret)
    if kind != OPAQUE:
        return f"it is of type {kind}"
    return None


def refusal_message(kind: ValuesKind, workspace: str, name: str, why: str) -> str:
    """The whole message of a refusal: the object, why, and the rule."""
    return f"{kind.value} {workspace}/{name} is not delivered to clusters: {why}; {RULE}"


@dataclass(frozen=True)
class ManagementReference:
    """A valuesFrom entry of a Bundle naming an object of its workspace, and where it is written
    (`spec.helm.valuesFrom[0]`, `spec.targets[1].helm.valuesFrom[0]`); `target` is the index of
    its target (None: spec.helm)."""

    ref: ValuesReference
    field: str
    target: int | None

    @property
    def key(self) -> tuple[str, str]:
        return self.ref.kind.value, self.ref.name


def management_references(bundle: Bundle) -> list[ManagementReference]:
    """Every valuesFrom entry of `bundle` (spec.helm's, then each target's) with source:
    Management, in order."""
    holders: list[tuple[HelmOptions | None, str, int | None]] = [
        (bundle.spec.helm, "spec.helm", None)
    ]
    holders.extend(
        (target.helm, f"spec.targets[{index}].helm", index)
        for index, target in enumerate(bundle.spec.targets)
    )
    found = []
    for helm, where, target in holders:
        for index, ref in enumerate((helm.valuesFrom if helm else None) or ()):
            if ref.source is ValuesSource.MANAGEMENT:
                found.append(ManagementReference(ref, f"{where}.valuesFrom[{index}]", target))
    return found
