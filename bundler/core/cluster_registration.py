"""Registering a downstream cluster, the pure part: the Cluster and (remote mode) its kubeconfig
Secret that `bundler cluster register` creates or updates on the management cluster.

The Secret is named as Cluster API names it (`<name>-kubeconfig`, key `value`), so a remote-mode
agent and Flux read it the same way for registered and imported clusters. It carries the label
`bundler.dev/managed-by: bundler-register`; a Secret of that name without it (a Cluster API
cluster's own, for one) is never overwritten, nor a Cluster controlled by another object (an
import). An update keeps everything the command does not set: other labels, `spec.values`,
`spec.paused`, status. The kubeconfig must work from inside the management cluster: one that
points at files (certificate or key paths, a token file) is refused, naming the entry.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from bundler.api.cluster import AgentMode, Cluster, ClusterSpec
from bundler.api.meta import ObjectMeta
from bundler.core.capi_import import KUBECONFIG_KEY
from bundler.core.labels import LABEL_MANAGED_BY
from bundler.core.validation import validate_cluster, validate_metadata
from bundler.errors import InvalidInputError

Obj = dict[str, Any]

MANAGED_BY_REGISTER = "bundler-register"
# A Secret holds at most 1 MiB.
MAX_KUBECONFIG_BYTES = 1024 * 1024
# Kubeconfig entries that name a file on the machine the kubeconfig was written on.
_FILE_FIELDS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


@dataclass(frozen=True)
class Registration:
    """What to register: a Cluster `workspace/name`, its labels, its agent mode, and (remote
    mode) the kubeconfig its Secret holds."""

    workspace: str
    name: str
    mode: AgentMode
    labels: Mapping[str, str] = field(default_factory=dict)
    kubeconfig: bytes | None = field(default=None, repr=False)

    @property
    def secret_name(self) -> str:
        return f"{self.name}-kubeconfig"

    @property
    def cluster_ref(self) -> str:
        return f"Cluster {self.workspace}/{self.name}"


def parse_labels(pairs: Iterable[str], *, flag: str = "--label") -> dict[str, str]:
    """`key=value` pairs as labels; InvalidInputError naming `flag` for a malformed one."""
    labels: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"{pair!r} is not KEY=VALUE", field=flag)
        labels[key] = value
    return labels


def check_registration(registration: Registration) -> None:
    """InvalidInputError naming the field, before anything is written."""
    cluster = desired_cluster(registration, None)
    model = Cluster.model_validate(cluster)
    validate_metadata(model.metadata, obj=registration.cluster_ref)
    validate_cluster(model, obj=registration.cluster_ref)
    if registration.mode is AgentMode.REMOTE:
        check_kubeconfig(_kubeconfig_of(registration))
    elif registration.kubeconfig is not None:
        raise InvalidInputError(
            "only remote mode stores a kubeconfig (a pull agent runs in the cluster): pass "
            "--mode remote, or leave --kubeconfig out",
            field="--kubeconfig",
        )


def check_kubeconfig(content: bytes) -> None:
    """A kubeconfig usable from inside the management cluster; InvalidInputError otherwise."""
    if len(content) > MAX_KUBECONFIG_BYTES:
        raise InvalidInputError("is larger than a Secret can hold (1 MiB)", field="--kubeconfig")
    try:
        document = yaml.safe_load(content)
    except yaml.YAMLError:
        raise InvalidInputError("is not YAML", field="--kubeconfig") from None
    if not isinstance(document, dict) or not document.get("clusters"):
        raise InvalidInputError("is not a kubeconfig (no clusters)", field="--kubeconfig")
    context = _current_context(document)
    for kind, fields in _FILE_FIELDS.items():
        entry = _named(document, f"{kind}s", str(context.get(kind)), kind)
        for name in fields:
            if entry.get(name):
                raise InvalidInputError(
                    f"{kind} {context.get(kind)!r} refers to the file {name}, which does not "
                    f"exist in the management cluster: embed it (`kubectl config view --minify "
                    f"--flatten`)",
                    field="--kubeconfig",
                )


def desired_cluster(registration: Registration, live: Obj | None) -> Obj:
    """The Cluster to write: `live` (if any) with the registration's labels and spec fields."""
    if live is not None:
        _check_not_controlled(live, registration.cluster_ref)
    body = copy.deepcopy(live) if live is not None else _new_cluster(registration)
    meta = body.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **registration.labels}
    spec = body.setdefault("spec", {})
    spec["agentMode"] = registration.mode.value
    if registration.mode is AgentMode.REMOTE:
        spec["kubeConfigSecret"] = registration.secret_name
    return body


def desired_secret(registration: Registration, live: Obj | None) -> Obj:
    """The kubeconfig Secret to write (remote mode); refuses one bundler did not write."""
    kubeconfig = _kubeconfig_of(registration)
    where = f"Secret {registration.workspace}/{registration.secret_name}"
    if live is not None:
        labels = (live.get("metadata") or {}).get("labels") or {}
        if labels.get(LABEL_MANAGED_BY) != MANAGED_BY_REGISTER:
            raise InvalidInputError(
                f"exists and was not written by `bundler cluster register` (no label "
                f"{LABEL_MANAGED_BY}={MANAGED_BY_REGISTER}); it is left as it is: register "
                "under another name, or delete it first",
                obj=where,
            )
    body = (
        copy.deepcopy(live)
        if live is not None
        else {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": registration.secret_name,
                "namespace": registration.workspace,
                "labels": {LABEL_MANAGED_BY: MANAGED_BY_REGISTER},
            },
        }
    )
    body["type"] = "Opaque"
    body["data"] = {KUBECONFIG_KEY: base64.b64encode(kubeconfig).decode("ascii")}
    body.pop("stringData", None)
    return body


def _kubeconfig_of(registration: Registration) -> bytes:
    if registration.kubeconfig is None:
        raise InvalidInputError("remote mode needs the cluster's kubeconfig", field="--kubeconfig")
    return registration.kubeconfig


def _new_cluster(registration: Registration) -> Obj:
    cluster = Cluster(
        metadata=ObjectMeta(name=registration.name, namespace=registration.workspace),
        spec=ClusterSpec(agentMode=registration.mode),
    )
    return cluster.model_dump(mode="json", exclude_none=True, exclude={"status"})


def _check_not_controlled(live: Obj, where: str) -> None:
    for owner in (live.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("controller"):
            raise InvalidInputError(
                f"is controlled by {owner.get('kind')} {owner.get('name')} (imported): it is "
                "left as it is",
                obj=where,
            )


def _current_context(document: Obj) -> Obj:
    name = document.get("current-context")
    if not name:
        raise InvalidInputError("has no current-context", field="--kubeconfig")
    return _named(document, "contexts", str(name), "context")


def _named(document: Obj, section: str, name: str, key: str) -> Obj:
    for entry in document.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get(key)
            return value if isinstance(value, dict) else {}
    raise InvalidInputError(f"has no {key} named {name!r}", field="--kubeconfig")
