"""Shared API building blocks: object metadata, conditions, references, durations, int-or-string."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StringConstraints,
    WithJsonSchema,
    model_serializer,
)

from bundler.api.base import ApiModel

API_VERSION = "bundler.dev/v1alpha1"

# Flux's duration syntax (Go time.Duration without "us"/"ns"), e.g. "5m", "1h30m", "10s".
Duration = Annotated[str, StringConstraints(pattern=r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")]

# A count or a percentage ("10%"), as Kubernetes' IntOrString; the CRD marks it int-or-string.
IntOrPercent = Annotated[
    Annotated[int, Field(ge=0)] | Annotated[str, StringConstraints(pattern=r"^[0-9]+%$")],
    WithJsonSchema({"x-kubernetes-int-or-string": True}),
]

# Free-form trees (Helm values, Cluster values): the only place the CRDs preserve unknown fields.
FreeForm = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]


class ObjectMeta(ApiModel):
    """The subset of metav1.ObjectMeta bundler reads; server-set fields are accepted as served."""

    name: str
    namespace: str | None = None
    generateName: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    uid: str | None = None
    resourceVersion: str | None = None
    generation: int | None = None
    creationTimestamp: str | None = None
    deletionTimestamp: str | None = None
    deletionGracePeriodSeconds: int | None = None
    finalizers: list[str] = Field(default_factory=list)
    ownerReferences: list[dict[str, Any]] = Field(default_factory=list)
    managedFields: list[dict[str, Any]] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _drop_empty(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        # Empty label/annotation/finalizer lists are noise in stored objects and diffs.
        dumped: dict[str, Any] = handler(self)
        return {k: v for k, v in dumped.items() if v != [] and v != {}}


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


# metav1.Condition's bounds, as Kubernetes (and Cluster API) put them in CRDs; the message in bytes
# of UTF-8 here, which keeps it within maxLength characters as well.
CONDITION_TYPE_MAX = 316
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
CONDITION_REASON_MAX = 1024
# Empty is allowed (unlike metav1.Condition): a status written before the bounds still parses.
CONDITION_REASON_PATTERN = r"^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?)?$"
CONDITION_MESSAGE_MAX = 32768
# Cluster API's bound on a conditions list.
CONDITIONS_MAX = 32

ConditionTypeName = Annotated[
    str, StringConstraints(max_length=CONDITION_TYPE_MAX, pattern=CONDITION_TYPE_PATTERN)
]
ConditionReason = Annotated[
    str, StringConstraints(max_length=CONDITION_REASON_MAX, pattern=CONDITION_REASON_PATTERN)
]
# Text that agents, Flux and registries write. The CRDs bound it; the models read longer text (what
# an agent wrote where no CRD bound it) so that bundler.core.bounds can truncate it when copied.
Message = Annotated[str, WithJsonSchema({"type": "string", "maxLength": CONDITION_MESSAGE_MAX})]


class Condition(ApiModel):
    """One aspect of the object's state, as a standard Kubernetes condition (metav1.Condition)."""

    type: ConditionTypeName
    """The aspect, in CamelCase (e.g. Ready); at most 316 characters, optionally prefixed with a
    DNS subdomain and a slash."""
    status: ConditionStatus
    """True, False or Unknown."""
    reason: ConditionReason = ""
    """Why the condition is in its status, as a CamelCase word such as UpgradeFailed (at most
    1024 characters; empty allowed)."""
    message: Message = ""
    """Details for humans. Text that agents, Flux or registries wrote is cut at 32 KiB, ending
    `... (truncated)`."""
    lastTransitionTime: str | None = None
    """When the status last changed (RFC 3339)."""
    observedGeneration: int | None = None
    """The metadata.generation of the object the condition was set for: a condition about an
    older generation is stale."""


Conditions = Annotated[list[Condition], Field(max_length=CONDITIONS_MAX)]


class LocalObjectReference(ApiModel):
    """A reference to an object in the namespace of the object that holds the reference."""

    name: str = Field(min_length=1)
    """Name of the object (not empty)."""
