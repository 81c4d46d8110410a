"""The Protobuf messages of the built-in kinds served, as kube-apiserver decodes them.

Field numbers are those of k8s.io/api and k8s.io/apimachinery v0.36.3 (`generated.proto` of
core/v1, rbac/v1, coordination/v1 and meta/v1); how each field reads as JSON follows the Go type
it decodes into (`types.go`: value or pointer, `omitempty`, `omitzero`), since kube-apiserver
decodes a Protobuf body into that type and serves it as Go's JSON encoder writes it. Only the
messages of the kinds bundler's API server serves are here, and DeleteOptions (a typed client's
delete sends one); CustomResourceDefinition is left out (kubectl writes CRDs as JSON).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Wire(Enum):
    """What a field's bytes are and the JSON they become."""

    STRING = "string"
    BYTES = "bytes"  # base64 in JSON
    BOOL = "bool"
    INT = "int"  # int32 and int64 alike: a varint, two's complement
    TIME = "time"  # metav1.Time: RFC 3339 to the second, null when zero
    MICRO_TIME = "micro-time"  # metav1.MicroTime: RFC 3339 to the microsecond
    FIELDS_V1 = "fields-v1"  # metav1.FieldsV1: a message whose field 1 holds JSON, written as is
    MESSAGE = "message"


class Shape(Enum):
    SINGLE = "single"
    REPEATED = "repeated"
    MAP = "map"  # map<string, wire>


class Presence(Enum):
    """How the Go field reads back as JSON when it holds its zero value."""

    OMIT_EMPTY = (
        "omitempty"  # a value field tagged omitempty: zero scalars and empty lists left out
    )
    ALWAYS = "always"  # a value field without omitempty: written even when zero (lists as null)
    POINTER = "pointer"  # a pointer: written when the message carries it, whatever its value
    OMIT_ZERO = "omitzero"  # a struct tagged omitzero: left out when zero


@dataclass(frozen=True)
class Field:
    name: str
    wire: Wire
    shape: Shape = Shape.SINGLE
    presence: Presence = Presence.OMIT_EMPTY
    message: str = ""


def _s(name: str, presence: Presence = Presence.OMIT_EMPTY) -> Field:
    return Field(name, Wire.STRING, presence=presence)


def _strings(name: str, presence: Presence = Presence.OMIT_EMPTY) -> Field:
    return Field(name, Wire.STRING, Shape.REPEATED, presence)


def _m(name: str, message: str, presence: Presence = Presence.OMIT_EMPTY) -> Field:
    return Field(name, Wire.MESSAGE, presence=presence, message=message)


def _ms(name: str, message: str, presence: Presence = Presence.OMIT_EMPTY) -> Field:
    return Field(name, Wire.MESSAGE, Shape.REPEATED, presence, message)


def _map(name: str, wire: Wire = Wire.STRING) -> Field:
    return Field(name, wire, Shape.MAP)


_ALWAYS = Presence.ALWAYS
_POINTER = Presence.POINTER
_META = _m("metadata", "ObjectMeta")

#: Message name to its fields by number.
MESSAGES: dict[str, dict[int, Field]] = {
    "ObjectMeta": {
        1: _s("name"),
        2: _s("generateName"),
        3: _s("namespace"),
        4: _s("selfLink"),
        5: _s("uid"),
        6: _s("resourceVersion"),
        7: Field("generation", Wire.INT),
        8: Field("creationTimestamp", Wire.TIME, presence=Presence.OMIT_ZERO),
        9: Field("deletionTimestamp", Wire.TIME, presence=_POINTER),
        10: Field("deletionGracePeriodSeconds", Wire.INT, presence=_POINTER),
        11: _map("labels"),
        12: _map("annotations"),
        13: _ms("ownerReferences", "OwnerReference"),
        14: _strings("finalizers"),
        17: _ms("managedFields", "ManagedFieldsEntry"),
    },
    "OwnerReference": {
        5: _s("apiVersion", _ALWAYS),
        1: _s("kind", _ALWAYS),
        3: _s("name", _ALWAYS),
        4: _s("uid", _ALWAYS),
        6: Field("controller", Wire.BOOL, presence=_POINTER),
        7: Field("blockOwnerDeletion", Wire.BOOL, presence=_POINTER),
    },
    "ManagedFieldsEntry": {
        1: _s("manager"),
        2: _s("operation"),
        3: _s("apiVersion"),
        4: Field("time", Wire.TIME, presence=_POINTER),
        6: _s("fieldsType"),
        7: Field("fieldsV1", Wire.FIELDS_V1, presence=_POINTER),
        8: _s("subresource"),
    },
    "LabelSelector": {
        1: _map("matchLabels"),
        2: _ms("matchExpressions", "LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {
        1: _s("key", _ALWAYS),
        2: _s("operator", _ALWAYS),
        3: _strings("values"),
    },
    "DeleteOptions": {
        1: Field("gracePeriodSeconds", Wire.INT, presence=_POINTER),
        2: _m("preconditions", "Preconditions", _POINTER),
        3: Field("orphanDependents", Wire.BOOL, presence=_POINTER),
        4: _s("propagationPolicy", _POINTER),
        5: _strings("dryRun"),
        6: Field("ignoreStoreReadErrorWithClusterBreakingPotential", Wire.BOOL, presence=_POINTER),
    },
    "Preconditions": {1: _s("uid", _POINTER), 2: _s("resourceVersion", _POINTER)},
    # core/v1
    "Namespace": {
        1: _META,
        2: _m("spec", "NamespaceSpec"),
        3: _m("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: _strings("finalizers")},
    "NamespaceStatus": {1: _s("phase"), 2: _ms("conditions", "NamespaceCondition")},
    "NamespaceCondition": {
        1: _s("type", _ALWAYS),
        2: _s("status", _ALWAYS),
        4: Field("lastTransitionTime", Wire.TIME),
        5: _s("reason"),
        6: _s("message"),
    },
    "Secret": {
        1: _META,
        5: Field("immutable", Wire.BOOL, presence=_POINTER),
        2: _map("data", Wire.BYTES),
        4: _map("stringData"),
        3: _s("type"),
    },
    "ServiceAccount": {
        1: _META,
        2: _ms("secrets", "ObjectReference"),
        3: _ms("imagePullSecrets", "LocalObjectReference"),
        4: Field("automountServiceAccountToken", Wire.BOOL, presence=_POINTER),
    },
    "ObjectReference": {
        1: _s("kind"),
        2: _s("namespace"),
        3: _s("name"),
        4: _s("uid"),
        5: _s("apiVersion"),
        6: _s("resourceVersion"),
        7: _s("fieldPath"),
    },
    "LocalObjectReference": {1: _s("name")},
    "Event": {
        1: _m("metadata", "ObjectMeta", _ALWAYS),
        2: _m("involvedObject", "ObjectReference", _ALWAYS),
        3: _s("reason"),
        4: _s("message"),
        5: _m("source", "EventSource"),
        6: Field("firstTimestamp", Wire.TIME),
        7: Field("lastTimestamp", Wire.TIME),
        8: Field("count", Wire.INT),
        9: _s("type"),
        10: Field("eventTime", Wire.MICRO_TIME),
        11: _m("series", "EventSeries", _POINTER),
        12: _s("action"),
        13: _m("related", "ObjectReference", _POINTER),
        14: _s("reportingComponent", _ALWAYS),
        15: _s("reportingInstance", _ALWAYS),
    },
    "EventSource": {1: _s("component"), 2: _s("host")},
    "EventSeries": {1: Field("count", Wire.INT), 2: Field("lastObservedTime", Wire.MICRO_TIME)},
    # rbac.authorization.k8s.io/v1
    "Role": {1: _META, 2: _ms("rules", "PolicyRule", _ALWAYS)},
    "ClusterRole": {
        1: _META,
        2: _ms("rules", "PolicyRule", _ALWAYS),
        3: _m("aggregationRule", "AggregationRule", _POINTER),
    },
    "AggregationRule": {1: _ms("clusterRoleSelectors", "LabelSelector")},
    "PolicyRule": {
        1: _strings("verbs", _ALWAYS),
        2: _strings("apiGroups"),
        3: _strings("resources"),
        4: _strings("resourceNames"),
        5: _strings("nonResourceURLs"),
    },
    "RoleBinding": {
        1: _META,
        2: _ms("subjects", "Subject"),
        3: _m("roleRef", "RoleRef", _ALWAYS),
    },
    "ClusterRoleBinding": {
        1: _META,
        2: _ms("subjects", "Subject"),
        3: _m("roleRef", "RoleRef", _ALWAYS),
    },
    "Subject": {
        1: _s("kind", _ALWAYS),
        2: _s("apiGroup"),
        3: _s("name", _ALWAYS),
        4: _s("namespace"),
    },
    "RoleRef": {1: _s("apiGroup", _ALWAYS), 2: _s("kind", _ALWAYS), 3: _s("name", _ALWAYS)},
    # coordination.k8s.io/v1
    "Lease": {1: _META, 2: _m("spec", "LeaseSpec")},
    "LeaseSpec": {
        1: _s("holderIdentity", _POINTER),
        2: Field("leaseDurationSeconds", Wire.INT, presence=_POINTER),
        3: Field("acquireTime", Wire.MICRO_TIME, presence=_POINTER),
        4: Field("renewTime", Wire.MICRO_TIME, presence=_POINTER),
        5: Field("leaseTransitions", Wire.INT, presence=_POINTER),
        6: _s("strategy", _POINTER),
        7: _s("preferredHolder", _POINTER),
    },
}
