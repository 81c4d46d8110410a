"""Cluster API import, the pure part: which CAPI Clusters are imported, and as what.

An imported CAPI Cluster becomes a bundler Cluster of the same name and namespace, controlled by the
CAPI object (ownerReference), labelled like it plus `bundler.dev/cluster-class` (its ClusterClass),
with `kubeConfigSecret: <name>-kubeconfig`, remote agent mode unless the CAPI Cluster's annotation
`bundler.dev/agent-mode` says `pull`, and `spec.values.Cluster` = the CAPI Cluster without status,
managedFields, resourceVersion and uid (so templates read e.g. its pod CIDRs).

As CAAPH's `.ControlPlane` and `.InfraCluster`, the objects the CAPI Cluster's
`spec.controlPlaneRef` and `spec.infrastructureRef` name are `spec.values.ControlPlane` and
`spec.values.InfraCluster`, sanitized the same way, when the caller could read them
(`capi_references` says which). Each of the three is bounded: one whose JSON is over
CAPI_VALUE_MAX_BYTES is left out (a template reading it fails for that cluster, naming it), so the
bundler Cluster always fits what the API server stores.

One form for both Cluster versions (`unified`): a v1beta1 Cluster also gets the v1beta2 spellings
of what v1beta2 renamed and templates read, `spec.topology.classRef.name` (v1beta1
`spec.topology.class`, and `classRef.namespace` from `classNamespace`) and `apiGroup` on
`spec.controlPlaneRef` and `spec.infrastructureRef` (v1beta1 `apiVersion`); its own fields stay.
So a template written against v1beta2 reads either.

The gate: until the control plane is initialized (v1beta2 `status.initialization.
controlPlaneInitialized`, v1beta1 `status.controlPlaneReady`), or while the kubeconfig Secret is
missing, the Cluster carries the annotation `bundler.dev/import-gate: <reason>`. Planning gives a
gated Cluster no BundleDeployments (`is_gated`), and its Ready condition says why (`gate_message`).

Each ClusterClass in use in a namespace gets one ClusterGroup selecting on the class label.
The manager's importer (bundler.capi) and `bundler render` both build their objects here, so the
offline preview and the manager agree.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.api.cluster import AgentMode, Cluster
from bundler.api.meta import API_VERSION
from bundler.core.labels import (
    ANNOTATION_AGENT_MODE,
    ANNOTATION_IMPORT_GATE,
    IMPORT_DISABLED,
    IMPORT_ENABLED,
    LABEL_CLUSTER_CLASS,
    LABEL_IMPORT,
    LABEL_MANAGED_BY,
    MANAGED_BY_CAPI_IMPORT,
)
from bundler.core.naming import DNS1123_LABEL_MAX, is_dns1123_subdomain, shorten_name
from bundler.errors import InvalidInputError

CAPI_GROUP = "cluster.x-k8s.io"
CAPI_KIND = "Cluster"
V1BETA1 = f"{CAPI_GROUP}/v1beta1"
KUBECONFIG_SUFFIX = "-kubeconfig"
KUBECONFIG_KEY = "value"
CLASS_GROUP_PREFIX = "cluster-class-"

# What `values.Cluster` leaves out: status, and metadata the server rewrites on every write.
_DROPPED_METADATA = ("managedFields", "resourceVersion", "uid")
# The most one object of `spec.values` (Cluster, ControlPlane, InfraCluster) may take, as JSON.
CAPI_VALUE_MAX_BYTES = 256 * 1024
# Cluster API's provider groups, where the kinds a Cluster refers to are defined.
CAPI_REFERENCE_GROUPS = ("controlplane.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io")
# The kinds (plurals) of those groups the import reads, those of the providers Cluster API lists:
# named one by one, as bundler's RBAC holds no wildcard. A kind not listed is not read.
CAPI_REFERENCE_KINDS: Mapping[str, tuple[str, ...]] = {
    "controlplane.cluster.x-k8s.io": (
        "awsmanagedcontrolplanes",
        "k0scontrolplanes",
        "k0smotroncontrolplanes",
        "kamajicontrolplanes",
        "kubeadmcontrolplanes",
        "microk8scontrolplanes",
        "nestedcontrolplanes",
        "rke2controlplanes",
        "taloscontrolplanes",
    ),
    "infrastructure.cluster.x-k8s.io": (
        "awsclusters",
        "awsmanagedclusters",
        "azureasomanagedclusters",
        "azureclusters",
        "azuremanagedclusters",
        "byoclusters",
        "cloudstackclusters",
        "dockerclusters",
        "gcpclusters",
        "gcpmanagedclusters",
        "hetznerclusters",
        "ibmpowervsclusters",
        "ibmvpcclusters",
        "kubevirtclusters",
        "linodeclusters",
        "metal3clusters",
        "nutanixclusters",
        "ociclusters",
        "openstackclusters",
        "proxmoxclusters",
        "vcdclusters",
        "vsphereclusters",
    ),
}


def reference_plural(kind: str) -> str:
    """A provider kind's plural by Cluster API's convention: lower case, plus `s`."""
    return f"{kind.lower()}s"


def is_readable_reference(group: str, kind: str) -> bool:
    """Whether the import reads objects of this kind (CAPI_REFERENCE_KINDS)."""
    return reference_plural(kind) in CAPI_REFERENCE_KINDS.get(group, ())


CONTROL_PLANE = "ControlPlane"
INFRA_CLUSTER = "InfraCluster"
# The CAPI Cluster's reference fields, by the name templates read their objects under.
_REFERENCE_FIELDS = ((CONTROL_PLANE, "controlPlaneRef"), (INFRA_CLUSTER, "infrastructureRef"))


class ImportMode(StrEnum):
    """`--capi-import`: import labelled clusters (or clusters of labelled namespaces), all, none."""

    LABELED = "labeled"
    ALL = "all"
    OFF = "off"


class ImportGate(StrEnum):
    """Why an imported Cluster receives nothing yet; the value is the Ready condition's reason."""

    CONTROL_PLANE_NOT_INITIALIZED = "ControlPlaneNotInitialized"
    KUBECONFIG_SECRET_MISSING = "KubeconfigSecretMissing"


def should_import(
    mode: ImportMode, capi_labels: Mapping[str, str], namespace_labels: Mapping[str, str]
) -> bool:
    """Whether a CAPI Cluster is imported under `mode`.

    The cluster's own `bundler.dev/import` label decides when it is "true" or "false" (so one
    cluster can opt out of an opted-in namespace, or of `all`); otherwise `all` imports and
    `labeled` imports when the namespace is labelled `bundler.dev/import: "true"`.
    """
    if mode is ImportMode.OFF:
        return False
    own = capi_labels.get(LABEL_IMPORT)
    if own in (IMPORT_ENABLED, IMPORT_DISABLED):
        return own == IMPORT_ENABLED
    return mode is ImportMode.ALL or namespace_labels.get(LABEL_IMPORT) == IMPORT_ENABLED


def is_capi_cluster(obj: Mapping[str, Any]) -> bool:
    """Whether `obj` is a Cluster API Cluster (any version), by apiVersion and kind."""
    api_version = obj.get("apiVersion")
    return (
        obj.get("kind") == CAPI_KIND
        and isinstance(api_version, str)
        and api_version.startswith(f"{CAPI_GROUP}/")
    )


def kubeconfig_secret_name(cluster_name: str) -> str:
    """Cluster API's kubeconfig Secret for a cluster: `<name>-kubeconfig`, key `value`."""
    return f"{cluster_name}{KUBECONFIG_SUFFIX}"


def cluster_of_kubeconfig_secret(secret_name: str) -> str | None:
    """The cluster a Secret named `<name>-kubeconfig` belongs to, else None."""
    if secret_name.endswith(KUBECONFIG_SUFFIX) and len(secret_name) > len(KUBECONFIG_SUFFIX):
        return secret_name[: -len(KUBECONFIG_SUFFIX)]
    return None


def kubeconfig_present(secret: Mapping[str, Any] | None) -> bool:
    """Whether a kubeconfig Secret exists and holds a non-empty key `value` (data or stringData)."""
    if secret is None:
        return False
    return any(
        isinstance(section, Mapping) and bool(section.get(KUBECONFIG_KEY))
        for section in (secret.get("data"), secret.get("stringData"))
    )


def control_plane_initialized(capi: Mapping[str, Any]) -> bool:
    """v1beta2: status.initialization.controlPlaneInitialized; v1beta1: status.controlPlaneReady."""
    status = _mapping(capi.get("status"))
    if capi.get("apiVersion") == V1BETA1:
        return status.get("controlPlaneReady") is True
    return _mapping(status.get("initialization")).get("controlPlaneInitialized") is True


def capi_gate(capi: Mapping[str, Any], kubeconfig_present: bool) -> ImportGate | None:
    """What holds deployments back from an imported cluster, or None once it may receive them."""
    if not control_plane_initialized(capi):
        return ImportGate.CONTROL_PLANE_NOT_INITIALIZED
    if not kubeconfig_present:
        return ImportGate.KUBECONFIG_SECRET_MISSING
    return None


def is_gated(cluster: Cluster) -> str | None:
    """The gate reason of a Cluster (annotation `bundler.dev/import-gate`), or None when open.

    Planning skips gated clusters: they are not targeted and get no BundleDeployments.
    """
    return cluster.metadata.annotations.get(ANNOTATION_IMPORT_GATE) or None


def gate_message(reason: str, cluster: Cluster) -> str:
    """The Ready=False message of a gated Cluster: which gate, and what lifts it."""
    if reason == ImportGate.CONTROL_PLANE_NOT_INITIALIZED:
        return (
            "the Cluster API control plane is not initialized yet; nothing is deployed until it is"
        )
    if reason == ImportGate.KUBECONFIG_SECRET_MISSING:
        secret = cluster.spec.kubeConfigSecret or kubeconfig_secret_name(cluster.metadata.name)
        return (
            f"kubeconfig Secret {cluster.metadata.namespace}/{secret} (key {KUBECONFIG_KEY!r}) "
            "is missing; nothing is deployed until it exists"
        )
    return f"import gate {reason!r} is closed; nothing is deployed until it opens"


def cluster_class(capi: Mapping[str, Any]) -> str | None:
    """The ClusterClass: spec.topology.classRef.name (v1beta2), spec.topology.class (v1beta1)."""
    topology = _mapping(_mapping(capi.get("spec")).get("topology"))
    if capi.get("apiVersion") == V1BETA1:
        name, field = topology.get("class"), "spec.topology.class"
    else:
        name, field = _mapping(topology.get("classRef")).get("name"), "spec.topology.classRef.name"
    if name is None:
        return None
    if not isinstance(name, str) or not is_dns1123_subdomain(name):
        raise InvalidInputError(
            f"ClusterClass name {name!r} is not a DNS-1123 subdomain",
            obj=describe(capi),
            field=field,
        )
    return name


def class_label(class_name: str) -> str:
    """The `bundler.dev/cluster-class` label value: the class name, shortened past 63 characters."""
    return shorten_name(class_name, DNS1123_LABEL_MAX)


def sanitized(capi: Mapping[str, Any]) -> dict[str, Any]:
    """The CAPI Cluster as templates see it: no status, managedFields, resourceVersion or uid."""
    body = {key: copy.deepcopy(value) for key, value in capi.items() if key != "status"}
    metadata = _mapping(body.get("metadata"))
    body["metadata"] = {k: v for k, v in metadata.items() if k not in _DROPPED_METADATA}
    return body


@dataclass(frozen=True)
class CapiReference:
    """An object a CAPI Cluster refers to: `role` is the name templates read it under.
    `version` is None when the reference names only the group (v1beta2): the reader picks the
    version the server serves."""

    role: str
    group: str
    version: str | None
    kind: str
    name: str
    namespace: str


def capi_references(capi: Mapping[str, Any]) -> tuple[CapiReference, ...]:
    """The ControlPlane and InfraCluster a CAPI Cluster names (v1beta2 `apiGroup`, v1beta1
    `apiVersion`; always in the Cluster's namespace, as Cluster API requires); incomplete
    references are left out."""
    spec = _mapping(capi.get("spec"))
    namespace = str(_mapping(capi.get("metadata")).get("namespace") or "")
    found = []
    for role, field in _REFERENCE_FIELDS:
        ref = _mapping(spec.get(field))
        kind, name = ref.get("kind"), ref.get("name")
        api_version, api_group = ref.get("apiVersion"), ref.get("apiGroup")
        if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
            continue
        if isinstance(api_version, str) and "/" in api_version:
            group, version = api_version.split("/", 1)
            found.append(CapiReference(role, group, version, kind, name, namespace))
        elif isinstance(api_group, str) and api_group:
            found.append(CapiReference(role, api_group, None, kind, name, namespace))
    return tuple(found)


def unified(capi: Mapping[str, Any]) -> dict[str, Any]:
    """The sanitized CAPI Cluster, with the v1beta2 spellings added to a v1beta1 one (see the
    module docstring)."""
    body = sanitized(capi)
    if capi.get("apiVersion") != V1BETA1:
        return body
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return body
    topology = spec.get("topology")
    if isinstance(topology, dict) and isinstance(topology.get("class"), str):
        class_ref = {"name": topology["class"]}
        if isinstance(topology.get("classNamespace"), str):
            class_ref["namespace"] = topology["classNamespace"]
        topology.setdefault("classRef", class_ref)
    for _, field in _REFERENCE_FIELDS:
        ref = spec.get(field)
        if isinstance(ref, dict) and isinstance(ref.get("apiVersion"), str):
            ref.setdefault("apiGroup", ref["apiVersion"].partition("/")[0])
    return body


def capi_values(
    capi: Mapping[str, Any], referenced: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    """`spec.values` of an imported Cluster: the unified Cluster and the `referenced` objects by
    role, each sanitized; and the names of those left out for their size."""
    candidates = {"Cluster": unified(capi)}
    candidates.update({role: sanitized(obj) for role, obj in sorted(referenced.items())})
    values, omitted = {}, []
    for role, body in candidates.items():
        size = len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
        if size > CAPI_VALUE_MAX_BYTES:
            omitted.append(role)
        else:
            values[role] = body
    return values, omitted


def owner_reference(capi: Mapping[str, Any]) -> dict[str, Any]:
    """The controller ownerReference from an imported Cluster to its CAPI Cluster."""
    metadata = _mapping(capi.get("metadata"))
    return {
        "apiVersion": capi["apiVersion"],
        "kind": CAPI_KIND,
        "name": metadata["name"],
        "uid": metadata["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def capi_owner(cluster: Mapping[str, Any]) -> dict[str, Any] | None:
    """The CAPI Cluster controlling a bundler Cluster object (its ownerReference), else None."""
    for ref in _mapping(cluster.get("metadata")).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and is_capi_cluster(ref) and ref.get("controller") is True:
            return dict(ref)
    return None


def imported_cluster(
    capi: Mapping[str, Any],
    *,
    kubeconfig_present: bool,
    default_agent_mode: AgentMode = AgentMode.REMOTE,
    referenced: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The bundler Cluster object to write for an imported CAPI Cluster (see the module doc);
    `referenced`: the objects of `capi_references` that could be read, by role.

    The ownerReference is left out when the CAPI Cluster has no uid (offline input documents).
    """
    name, namespace = _identity(capi)
    metadata = _mapping(capi.get("metadata"))
    labels = dict(_string_map(metadata.get("labels"), capi, "metadata.labels"))
    labels.pop(LABEL_CLUSTER_CLASS, None)
    class_name = cluster_class(capi)
    if class_name is not None:
        labels[LABEL_CLUSTER_CLASS] = class_label(class_name)
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    gate = capi_gate(capi, kubeconfig_present)
    if gate is not None:
        meta["annotations"] = {ANNOTATION_IMPORT_GATE: gate.value}
    if metadata.get("uid"):
        meta["ownerReferences"] = [owner_reference(capi)]
    return {
        "apiVersion": API_VERSION,
        "kind": "Cluster",
        "metadata": meta,
        "spec": {
            "values": capi_values(capi, referenced or {})[0],
            "kubeConfigSecret": kubeconfig_secret_name(name),
            "agentMode": _agent_mode(capi, default_agent_mode).value,
        },
    }


def class_group_name(label: str) -> str:
    """The ClusterGroup of one ClusterClass (by its label value): `cluster-class-<class>`."""
    return shorten_name(f"{CLASS_GROUP_PREFIX}{label}", DNS1123_LABEL_MAX)


def class_groups(clusters: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One ClusterGroup per (namespace, ClusterClass label) among `clusters`, sorted.

    Each selects `bundler.dev/cluster-class: <class>` and is labelled with the class and as written
    by the importer (`bundler.dev/managed-by: bundler-capi-import`).
    """
    in_use: set[tuple[str, str]] = set()
    for cluster in clusters:
        metadata = _mapping(cluster.get("metadata"))
        label = _mapping(metadata.get("labels")).get(LABEL_CLUSTER_CLASS)
        if isinstance(label, str) and label:
            in_use.add((str(metadata.get("namespace") or ""), label))
    return [class_group(namespace, label) for namespace, label in sorted(in_use)]


def class_group(namespace: str, label: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterGroup",
        "metadata": {
            "name": class_group_name(label),
            "namespace": namespace,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY_CAPI_IMPORT, LABEL_CLUSTER_CLASS: label},
        },
        "spec": {"selector": {"matchLabels": {LABEL_CLUSTER_CLASS: label}}},
    }


def describe(capi: Mapping[str, Any]) -> str:
    """How messages name a CAPI Cluster: `Cluster.cluster.x-k8s.io ns/name`."""
    metadata = _mapping(capi.get("metadata"))
    return f"{CAPI_KIND}.{CAPI_GROUP} {metadata.get('namespace')}/{metadata.get('name')}"


def _identity(capi: Mapping[str, Any]) -> tuple[str, str]:
    metadata = _mapping(capi.get("metadata"))
    name, namespace = metadata.get("name"), metadata.get("namespace")
    for value, field in ((name, "metadata.name"), (namespace, "metadata.namespace")):
        if not isinstance(value, str) or not value:
            raise InvalidInputError("is required", obj=describe(capi), field=field)
    return str(name), str(namespace)


def _agent_mode(capi: Mapping[str, Any], default: AgentMode) -> AgentMode:
    annotations = _mapping(_mapping(capi.get("metadata")).get("annotations"))
    chosen = annotations.get(ANNOTATION_AGENT_MODE)
    if chosen is None:
        return default
    try:
        return AgentMode(chosen)
    except ValueError:
        allowed = ", ".join(mode.value for mode in AgentMode)
        raise InvalidInputError(
            f"agent mode {chosen!r} is not one of {allowed}",
            obj=describe(capi),
            field=f"metadata.annotations[{ANNOTATION_AGENT_MODE!r}]",
        ) from None


def _string_map(value: Any, capi: Mapping[str, Any], field: str) -> Mapping[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InvalidInputError("must map strings to strings", obj=describe(capi), field=field)
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
