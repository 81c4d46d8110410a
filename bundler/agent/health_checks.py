"""Health checks on the agent's side: each object a BundleDeployment's health checks name, read on
the downstream cluster and judged (bundler.core.health) within bounds.

The object is read by name (`get`: what the agent chart's RBAC grants for Deployments and Jobs,
and what its healthChecks.extraRules add for other kinds), in pull mode from the agent's own
cluster, in remote mode through the Cluster's kubeconfig. Its resource is the kind's plural as
Kubernetes guesses it. A kind the cluster does not serve, or a read the cluster refuses, is a
failed check that says so; anything transient is raised, and the reconcile retried.

Built-in checks (a Deployment, a Job) are judged here; expressions, Bundle authors' text, in a
child process the operating system bounds (bundler.agent.expressions). A check that is not
healthy is looked at again after RECHECK_PENDING seconds, a healthy one after RECHECK_HEALTHY:
nothing watches the objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from bundler.agent.expressions import shared_evaluator
from bundler.api.health import HealthCheck, HealthCheckResult, HealthState
from bundler.api.resources import Resource
from bundler.core.health import api_version, evaluate, resource_plural, result, uses_expressions
from bundler.store.errors import Forbidden, KindNotServed, NotFound
from bundler.store.protocol import Obj

RECHECK_PENDING = 5.0
RECHECK_HEALTHY = 60.0


class ObjectReader(Protocol):
    """Reads one object on the downstream cluster; None when it does not exist."""

    def read(self, res: Resource, name: str, namespace: str | None) -> Obj | None: ...


class StoreReader:
    """Reads through a store (the pull agent's own cluster)."""

    def __init__(self, get: Callable[[Resource, str, str | None], Obj]) -> None:
        self._get = get

    def read(self, res: Resource, name: str, namespace: str | None) -> Obj | None:
        try:
            return self._get(res, name, namespace)
        except NotFound:
            return None


def check_resource(check: HealthCheck) -> Resource:
    group_version = api_version(check) or ""
    group, _, version = group_version.rpartition("/")
    return Resource(group, version, check.kind, resource_plural(check.kind), bool(check.namespace))


def evaluate_checks(
    checks: Sequence[HealthCheck], reader: ObjectReader
) -> tuple[HealthCheckResult, ...]:
    """Each check's result, in order; expressions judged by the process's shared evaluator."""
    return tuple(_one(check, reader) for check in checks)


def recheck_after(results: Sequence[HealthCheckResult]) -> float:
    healthy = all(r.state is HealthState.HEALTHY for r in results)
    return RECHECK_HEALTHY if healthy else RECHECK_PENDING


def _one(check: HealthCheck, reader: ObjectReader) -> HealthCheckResult:
    res = check_resource(check)
    try:
        found = reader.read(res, check.name, check.namespace or None)
    except KindNotServed:
        return result(check, HealthState.FAILED, f"the cluster does not serve {res}")
    except Forbidden as refused:
        return result(
            check,
            HealthState.FAILED,
            f"the agent may not read it ({refused}): grant it get on {res.plural}"
            f"{'.' + res.group if res.group else ''} (agent chart: healthChecks.extraRules)",
        )
    if found is not None and uses_expressions(check):
        return shared_evaluator().evaluate(check, found)
    return evaluate(check, found)
