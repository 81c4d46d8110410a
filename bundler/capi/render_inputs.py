"""Cluster API import for offline input: CAPI Cluster, Secret and Namespace documents in, the
Clusters and ClusterGroups the manager's importer would write out.

`bundler render` (through bundler.inputs) hands over the documents `is_capi_input` accepts, with
the Clusters and ClusterGroups written by hand; the import mode, the gate (control plane status
and the `<name>-kubeconfig` Secret among the inputs) and the class groups are the manager's own
(bundler.core.capi_import), and so is the rule that a hand-written Cluster or ClusterGroup of the
same name wins. Errors name the document (`FILE:DOC-INDEX`) and the field.

The objects a CAPI Cluster refers to (its ControlPlane and InfraCluster, any kind of Cluster API's
provider groups) are read from the inputs too, and become `spec.values.ControlPlane` and
`spec.values.InfraCluster` as the manager's importer makes them.

Every Secret is checked as the API server would check it (metadata, `type` text, `data` keys and
base64 values, `stringData` text) and handed back too, kubeconfig or not: the inputs' Secrets
belong to the world they describe (the simulator creates them; a Bundle's `helm.secretRef` names
one). So is every ConfigMap (`data` text, `binaryData` base64, under valid keys), which a Bundle's
`valuesFrom` entry with `source: Management` may name.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from bundler.api.cluster import AgentMode, Cluster, ClusterGroup
from bundler.api.documents import (
    DEFAULT_NAMESPACE,
    Document,
    describe_validation_error,
    yaml_type,
)
from bundler.api.meta import ObjectMeta
from bundler.core.capi_import import (
    CAPI_GROUP,
    CAPI_REFERENCE_GROUPS,
    ImportMode,
    capi_references,
    class_groups,
    imported_cluster,
    is_capi_cluster,
    kubeconfig_present,
    kubeconfig_secret_name,
    should_import,
)
from bundler.core.naming import is_dns1123_label
from bundler.core.validation import validate_metadata
from bundler.errors import InvalidInputError

CAPI_API_VERSIONS = (f"{CAPI_GROUP}/v1beta2", f"{CAPI_GROUP}/v1beta1")
CORE_KINDS = ("Secret", "ConfigMap", "Namespace")
# The API server's rule for Secret data keys (a config map key).
_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_SECRET_KEY_MAX = 253

ObjectRef = tuple[str, str]


def is_capi_input(body: Mapping[str, Any]) -> bool:
    """Whether a document is for the CAPI import: a CAPI Cluster, an object of Cluster API's
    provider groups (a ControlPlane, an InfraCluster), or a v1 Secret, ConfigMap or Namespace."""
    return (
        is_capi_cluster(body)
        or _is_provider_object(body)
        or (body.get("apiVersion") == "v1" and body.get("kind") in CORE_KINDS)
    )


def _is_provider_object(body: Mapping[str, Any]) -> bool:
    api_version = body.get("apiVersion")
    if not isinstance(api_version, str) or not isinstance(body.get("kind"), str):
        return False
    return api_version.partition("/")[0] in CAPI_REFERENCE_GROUPS


@dataclass(frozen=True)
class ImportedInputs:
    """What the import adds to the inputs: Clusters in input order, class ClusterGroups sorted,
    and every Secret and ConfigMap of the inputs in input order (checked, namespace
    defaulted)."""

    clusters: tuple[Cluster, ...] = ()
    groups: tuple[ClusterGroup, ...] = ()
    secrets: tuple[dict[str, Any], ...] = ()
    config_maps: tuple[dict[str, Any], ...] = ()


@dataclass
class _Inputs:
    capi: list[tuple[Document, dict[str, Any]]] = field(default_factory=list)
    secrets: dict[ObjectRef, dict[str, Any]] = field(default_factory=dict)
    config_maps: dict[ObjectRef, dict[str, Any]] = field(default_factory=dict)
    namespace_labels: dict[str, Mapping[str, str]] = field(default_factory=dict)
    # Provider objects by (group, kind, namespace, name).
    provided: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)

    def referenced(self, capi: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The objects of the inputs that `capi` refers to, by role."""
        found = {}
        for ref in capi_references(capi):
            obj = self.provided.get((ref.group, ref.kind, ref.namespace, ref.name))
            if obj is not None:
                found[ref.role] = obj
        return found


def import_documents(
    docs: Sequence[Document],
    *,
    mode: ImportMode = ImportMode.LABELED,
    clusters: Sequence[Cluster] = (),
    groups: Sequence[ClusterGroup] = (),
    default_agent_mode: AgentMode = AgentMode.REMOTE,
) -> ImportedInputs:
    """The Clusters and ClusterGroups the importer would add, given the CAPI input `docs` and the
    hand-written `clusters` and `groups` (which win over imported ones of the same name)."""
    inputs = _collect(docs)
    taken = {(c.metadata.namespace or "", c.metadata.name) for c in clusters}
    imported: list[tuple[Document, dict[str, Any]]] = []
    for doc, capi in inputs.capi:
        meta = capi["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        labels = inputs.namespace_labels.get(namespace, {})
        if (namespace, name) in taken or not should_import(mode, meta.get("labels") or {}, labels):
            continue
        secret = inputs.secrets.get((namespace, kubeconfig_secret_name(name)))
        try:
            cluster = imported_cluster(
                capi,
                kubeconfig_present=kubeconfig_present(secret),
                default_agent_mode=default_agent_mode,
                referenced=inputs.referenced(capi),
            )
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=doc.where, field=err.field) from None
        imported.append((doc, cluster))
    hand_made = {(g.metadata.namespace or "", g.metadata.name) for g in groups}
    new_groups = [
        g
        for g in class_groups(c for _, c in imported)
        if (g["metadata"]["namespace"], g["metadata"]["name"]) not in hand_made
    ]
    return ImportedInputs(
        clusters=tuple(validated_cluster(doc, c) for doc, c in imported),
        groups=tuple(ClusterGroup.model_validate(g) for g in new_groups),
        secrets=tuple(inputs.secrets.values()),
        config_maps=tuple(inputs.config_maps.values()),
    )


def _collect(docs: Sequence[Document]) -> _Inputs:
    inputs = _Inputs()
    seen: dict[tuple[str, str, str], str] = {}
    for doc in docs:
        body = _with_namespace(doc)
        meta = body["metadata"]
        kind = "CAPI Cluster" if is_capi_cluster(body) else str(body.get("kind"))
        namespace = meta.get("namespace", "")
        ident = (kind, namespace, meta["name"])
        if ident in seen:
            name = f"{namespace}/{meta['name']}" if namespace else meta["name"]
            raise InvalidInputError(
                f"{kind} {name} is also defined at {seen[ident]}",
                obj=doc.where,
                field="metadata.name",
            )
        seen[ident] = doc.where
        if is_capi_cluster(body):
            inputs.capi.append((doc, _checked_capi(doc, body)))
        elif body.get("kind") == "Secret" and body.get("apiVersion") == "v1":
            inputs.secrets[(meta["namespace"], meta["name"])] = _checked_secret(doc, body)
        elif body.get("kind") == "ConfigMap" and body.get("apiVersion") == "v1":
            inputs.config_maps[(meta["namespace"], meta["name"])] = _checked_config_map(doc, body)
        elif body.get("kind") == "Namespace" and body.get("apiVersion") == "v1":
            inputs.namespace_labels[meta["name"]] = _labels(doc, meta)
        elif _is_provider_object(body):
            group = str(body["apiVersion"]).partition("/")[0]
            inputs.provided[(group, str(body["kind"]), namespace, meta["name"])] = body
        else:
            raise InvalidInputError(
                f"not a Cluster API input (apiVersion {body.get('apiVersion')!r}, "
                f"kind {body.get('kind')!r})",
                obj=doc.where,
                field="kind",
            )
    return inputs


def _with_namespace(doc: Document) -> dict[str, Any]:
    """The document with its metadata checked as the API server would and the namespace
    defaulted (not for Namespaces, which have none)."""
    body = dict(doc.body)
    meta = dict(_mapping(doc, body.get("metadata"), "metadata"))
    if not _text(doc, meta.get("name"), "metadata.name"):
        raise InvalidInputError("required field is missing", obj=doc.where, field="metadata.name")
    if body.get("kind") != "Namespace":
        meta["namespace"] = meta.get("namespace") or DEFAULT_NAMESPACE
    body["metadata"] = meta
    checked = ObjectMeta(
        name=meta["name"],
        namespace=_text(doc, meta.get("namespace"), "metadata.namespace"),
        labels=_labels(doc, meta),
        annotations=_string_map(doc, meta.get("annotations"), "metadata.annotations"),
    )
    validate_metadata(checked, obj=doc.where)
    if body.get("kind") == "Namespace" and not is_dns1123_label(checked.name):
        raise InvalidInputError(
            f"{checked.name!r} is not a valid namespace name (DNS-1123 label)",
            obj=doc.where,
            field="metadata.name",
        )
    return body


def _checked_capi(doc: Document, body: dict[str, Any]) -> dict[str, Any]:
    """The CAPI Cluster, with the fields the import reads of the types its CRD gives them."""
    if body["apiVersion"] not in CAPI_API_VERSIONS:
        raise InvalidInputError(
            f"unsupported apiVersion {body['apiVersion']!r} (expected "
            f"{' or '.join(CAPI_API_VERSIONS)})",
            obj=doc.where,
            field="apiVersion",
        )
    spec = _mapping(doc, body.get("spec"), "spec")
    topology = _mapping(doc, spec.get("topology"), "spec.topology")
    _mapping(doc, topology.get("classRef"), "spec.topology.classRef")
    status = _mapping(doc, body.get("status"), "status")
    initialization = _mapping(doc, status.get("initialization"), "status.initialization")
    for path, flag in (
        ("status.controlPlaneReady", status.get("controlPlaneReady")),
        (
            "status.initialization.controlPlaneInitialized",
            initialization.get("controlPlaneInitialized"),
        ),
    ):
        if flag is not None and not isinstance(flag, bool):
            raise InvalidInputError(
                f"must be true or false, got {yaml_type(flag)}", obj=doc.where, field=path
            )
    return body


def _checked_secret(doc: Document, body: dict[str, Any]) -> dict[str, Any]:
    """The Secret, with `type` text, `data` base64 text and `stringData` text under valid keys,
    as the API server insists."""
    _text(doc, body.get("type"), "type")
    data = _string_map(doc, body.get("data"), "data")
    string_data = _string_map(doc, body.get("stringData"), "stringData")
    for section, keys in (("data", data), ("stringData", string_data)):
        for key in keys:
            _check_secret_key(doc, section, key)
    for key, value in data.items():
        _check_base64(doc, "data", key, value)
    return body


def _checked_config_map(doc: Document, body: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap, with `data` text and `binaryData` base64 text under valid keys, as the API
    server insists."""
    for section in ("data", "binaryData"):
        for key, value in _string_map(doc, body.get(section), section).items():
            _check_secret_key(doc, section, key)
            if section == "binaryData":
                _check_base64(doc, section, key, value)
    return body


def _check_base64(doc: Document, section: str, key: str, value: str) -> None:
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        raise InvalidInputError(
            "is not valid base64 (use stringData for plain text)",
            obj=doc.where,
            field=f"{section}.{key}",
        ) from None


def _check_secret_key(doc: Document, section: str, key: str) -> None:
    chdir = key == "." or key.startswith("..")
    if len(key) > _SECRET_KEY_MAX or not _SECRET_KEY.fullmatch(key) or chdir:
        raise InvalidInputError(
            f"key {key!r} must be at most {_SECRET_KEY_MAX} letters, digits, '-', '_' or '.', "
            "and neither '.' nor start with '..'",
            obj=doc.where,
            field=section,
        )


def _labels(doc: Document, meta: Mapping[str, Any]) -> Mapping[str, str]:
    return _string_map(doc, meta.get("labels"), "metadata.labels")


def _string_map(doc: Document, value: Any, field: str) -> Mapping[str, str]:
    """`value` (absent: empty) when it maps strings to strings; an error naming `field` else."""
    mapping = _mapping(doc, value, field)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise InvalidInputError("must map strings to strings", obj=doc.where, field=field)
    return mapping


def _mapping(doc: Document, value: Any, field: str) -> Mapping[str, Any]:
    """`value` when it is a mapping, {} when absent; an error naming `field` else."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f"must be a mapping, got {yaml_type(value)}", obj=doc.where, field=field
        )
    return value


def _text(doc: Document, value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(
            f"must be a string, got {yaml_type(value)}", obj=doc.where, field=field
        )
    return value


def validated_cluster(doc: Document, obj: dict[str, Any]) -> Cluster:
    """`obj` as a Cluster model; a failure names the document it was imported from."""
    try:
        return Cluster.model_validate(obj)
    except ValidationError as err:
        path, message = describe_validation_error(err)
        raise InvalidInputError(message, obj=doc.where, field=path) from None
