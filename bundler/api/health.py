"""Health checks beyond Flux's Ready: objects of a release the agent looks at once Flux reports it
Ready, and what it found."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.summary import NON_READY_OBJECT_MESSAGE_MAX

# What a check may hold: a few checks per target, short expressions.
HEALTH_CHECKS_MAX = 16
EXPRESSION_MAX = 1024


class HealthCheck(ApiModel):
    """One object on the cluster that must be healthy before the deployment counts as Ready.
    Without expressions, a Deployment (apps/v1) is healthy once its updated replicas are all
    available, a Job (batch/v1) once it completed; any other kind needs `current`, a CEL
    expression over the object, as in Flux's healthCheckExprs."""

    apiVersion: str | None = None
    """The object's API version (group/version, or v1). Default: apps/v1 for a Deployment,
    batch/v1 for a Job; required for any other kind."""
    kind: str = Field(min_length=1, max_length=63)
    """The object's kind, e.g. Deployment, Job, Certificate."""
    name: str = Field(min_length=1, max_length=253)
    """The object's name."""
    namespace: str | None = None
    """The object's namespace. Default: the release namespace; empty ("") for a cluster-scoped
    object."""
    current: str | None = Field(default=None, max_length=EXPRESSION_MAX)
    """CEL expression: the object is healthy when it is true. The object's fields are its
    variables (metadata, spec, status): status.conditions.exists(c, c.type == 'Ready' &&
    c.status == 'True')."""
    inProgress: str | None = Field(default=None, max_length=EXPRESSION_MAX)
    """CEL expression: the object is still progressing when it is true (looked at first)."""
    failed: str | None = Field(default=None, max_length=EXPRESSION_MAX)
    """CEL expression: the object has failed when it is true (looked at before current). A
    failed check is a failure of the rollout (rolloutStrategy.onFailure)."""


class HealthState(StrEnum):
    """What a health check found."""

    HEALTHY = "Healthy"
    IN_PROGRESS = "InProgress"
    FAILED = "Failed"


class HealthCheckResult(ApiModel):
    """One health check as the agent last evaluated it."""

    kind: str
    """The object's kind."""
    namespace: str = ""
    """The object's namespace (empty for a cluster-scoped object)."""
    name: str
    """The object's name."""
    state: HealthState
    """Healthy, InProgress (not yet, or the object does not exist yet) or Failed."""
    message: str = Field(default="", max_length=NON_READY_OBJECT_MESSAGE_MAX)
    """What was found, cut at 1 KiB."""
