"""Health checks beyond Flux's Ready: what a check names, and what an object says of it. Pure.

A check names one object of a release (bundler.api.health.HealthCheck). The agent reads it once
Flux reports the release Ready, and `evaluate` judges it:
- a Deployment (apps/v1, no expression) is healthy once the controller observed its generation
  and its updated replicas are all available (kstatus' rule); it failed when its Progressing
  condition says ProgressDeadlineExceeded;
- a Job (batch/v1, no expression) is healthy once its Complete condition is True, failed once
  its Failed condition is;
- otherwise the CEL expressions decide, as Flux's healthCheckExprs do: `inProgress` first, then
  `failed`, then `current`; none true: in progress. The object's top-level fields (metadata,
  spec, status) are the variables. An expression that meets a missing field is in progress (the
  field may come), one that does not give a bool has failed.

Expressions are compiled when the Bundle is validated (`check_expressions`), so a bad one is the
Bundle's InvalidSpec, never a surprise on a cluster. Evaluating is bounded by the caller: the
object's size is checked here (OBJECT_BYTES_MAX), time and memory by the agent, which runs
`compile_and_evaluate` in a child process the operating system bounds.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import celpy
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from bundler.api.health import HealthCheck, HealthCheckResult, HealthState
from bundler.api.summary import NON_READY_OBJECT_MESSAGE_MAX
from bundler.errors import InvalidInputError

BUILT_IN = {"Deployment": "apps/v1", "Job": "batch/v1"}
# The largest object an expression is evaluated over (JSON bytes).
OBJECT_BYTES_MAX = 512 * 1024
EXPRESSIONS = ("inProgress", "failed", "current")

REASON_FAILED = "HealthCheckFailed"
REASON_PENDING = "HealthCheckPending"


def api_version(check: HealthCheck) -> str | None:
    return check.apiVersion or BUILT_IN.get(check.kind)


def uses_expressions(check: HealthCheck) -> bool:
    return any(getattr(check, name) for name in EXPRESSIONS)


def check_health_check(check: HealthCheck, *, obj: str, field: str) -> None:
    """InvalidInputError naming `field` when `check` cannot be evaluated as written."""
    if not uses_expressions(check) and check.kind not in BUILT_IN:
        raise InvalidInputError(
            f"kind {check.kind!r} has no built-in check: give a CEL expression in current "
            f"(built in: {', '.join(BUILT_IN)})",
            obj=obj,
            field=f"{field}.current",
        )
    if uses_expressions(check) and not check.current:
        raise InvalidInputError(
            "is required with inProgress or failed (as in Flux's healthCheckExprs)",
            obj=obj,
            field=f"{field}.current",
        )
    if api_version(check) is None:
        raise InvalidInputError(
            f"is required for kind {check.kind!r} (group/version, e.g. cert-manager.io/v1)",
            obj=obj,
            field=f"{field}.apiVersion",
        )
    for name in EXPRESSIONS:
        text = getattr(check, name)
        if text:
            try:
                _program(text)
            except CELParseError as err:
                raise InvalidInputError(
                    f"{text!r} is not a CEL expression: {_syntax_error(err)}",
                    obj=obj,
                    field=f"{field}.{name}",
                ) from None
            except RecursionError:
                raise InvalidInputError(
                    "nests too deeply to be compiled", obj=obj, field=f"{field}.{name}"
                ) from None


def warm_up() -> None:
    """Build celpy's parser now: the first compile takes longer than an evaluation may."""
    _program("true")


def compile_and_evaluate(check: HealthCheck, found: Mapping[str, Any] | None) -> HealthCheckResult:
    """`evaluate`, with the expressions compiled first: an expression that does not compile, or
    that the evaluator itself fails on, is a failed check saying so."""
    try:
        for name in EXPRESSIONS:
            if text := getattr(check, name):
                _program(text)
    except (CELParseError, RecursionError):
        return result(check, HealthState.FAILED, "its expressions cannot be compiled")
    try:
        return evaluate(check, found)
    except RecursionError:
        return result(check, HealthState.FAILED, "its expressions nest too deeply to evaluate")
    except Exception as err:  # the evaluator's own failure on an author's expression
        return result(
            check, HealthState.FAILED, f"its expressions cannot be evaluated: {type(err).__name__}"
        )


def oversized(check: HealthCheck, size: int) -> HealthCheckResult | None:
    """A failed result when an object of `size` JSON bytes is too large to be evaluated over."""
    if size <= OBJECT_BYTES_MAX:
        return None
    return result(
        check,
        HealthState.FAILED,
        f"the object is {size} bytes, more than the {OBJECT_BYTES_MAX} an expression reads",
    )


def with_namespace(check: HealthCheck, release_namespace: str) -> HealthCheck:
    """`check` with its namespace (default: the release's) and apiVersion filled in."""
    return check.model_copy(
        update={
            "namespace": release_namespace if check.namespace is None else check.namespace,
            "apiVersion": api_version(check),
        }
    )


def resource_plural(kind: str) -> str:
    """The resource name of `kind` as Kubernetes guesses it without discovery (and as CRDs
    are named by convention): lower case, `s` added (`es` after s, x, z, ch, sh; `ies` for a
    consonant and y)."""
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def result(check: HealthCheck, state: HealthState, message: str) -> HealthCheckResult:
    cut = message
    if len(cut) > NON_READY_OBJECT_MESSAGE_MAX:
        cut = cut[: NON_READY_OBJECT_MESSAGE_MAX - 3] + "..."
    return HealthCheckResult(
        kind=check.kind,
        namespace=check.namespace or "",
        name=check.name,
        state=state,
        message=cut,
    )


def evaluate(check: HealthCheck, found: Mapping[str, Any] | None) -> HealthCheckResult:
    """What `found` (the object `check` names; None: it does not exist) says of `check`."""
    if found is None:
        return result(check, HealthState.IN_PROGRESS, "not found (yet)")
    if uses_expressions(check):
        return _by_expressions(check, found)
    if check.kind == "Deployment":
        return _deployment(check, found)
    return _job(check, found)


def _deployment(check: HealthCheck, found: Mapping[str, Any]) -> HealthCheckResult:
    meta, spec, status = _parts(found)
    progressing = _condition(status, "Progressing")
    if progressing and progressing.get("reason") == "ProgressDeadlineExceeded":
        why = progressing.get("message") or "progress deadline exceeded"
        return result(check, HealthState.FAILED, f"ProgressDeadlineExceeded: {why}")
    if status.get("observedGeneration", 0) < meta.get("generation", 0):
        return result(check, HealthState.IN_PROGRESS, "the Deployment's change is not observed yet")
    wanted = spec.get("replicas", 1)
    updated = status.get("updatedReplicas", 0)
    available = status.get("availableReplicas", 0)
    total = status.get("replicas", 0)
    if updated < wanted or total > updated or available < wanted:
        return result(
            check,
            HealthState.IN_PROGRESS,
            f"{available} of {wanted} replicas available, {updated} updated, {total} in all",
        )
    return result(check, HealthState.HEALTHY, f"{available} of {wanted} replicas available")


def _job(check: HealthCheck, found: Mapping[str, Any]) -> HealthCheckResult:
    _, _, status = _parts(found)
    failed = _condition(status, "Failed")
    if failed and failed.get("status") == "True":
        why = ": ".join(str(failed.get(k)) for k in ("reason", "message") if failed.get(k))
        return result(check, HealthState.FAILED, why or "the Job failed")
    complete = _condition(status, "Complete")
    if complete and complete.get("status") == "True":
        return result(check, HealthState.HEALTHY, "the Job completed")
    succeeded = status.get("succeeded", 0)
    return result(check, HealthState.IN_PROGRESS, f"not complete yet ({succeeded} succeeded)")


def _by_expressions(check: HealthCheck, found: Mapping[str, Any]) -> HealthCheckResult:
    refused = oversized(check, len(json.dumps(found, separators=(",", ":"))))
    if refused is not None:
        return refused
    variables = {str(k): json_to_cel(v) for k, v in found.items()}
    states = (
        (check.inProgress, HealthState.IN_PROGRESS),
        (check.failed, HealthState.FAILED),
        (check.current, HealthState.HEALTHY),
    )
    for text, state in states:
        if not text:
            continue
        try:
            value = _program(text).evaluate(variables)
        except CELEvalError as err:
            return result(check, HealthState.IN_PROGRESS, f"{text}: {_eval_error(err)}")
        if isinstance(value, CELEvalError):
            return result(check, HealthState.IN_PROGRESS, f"{text}: {_eval_error(value)}")
        if not isinstance(value, celpy.celtypes.BoolType):
            return result(
                check, HealthState.FAILED, f"{text}: gives {type(value).__name__}, not a bool"
            )
        if bool(value):
            return result(check, state, f"{text}: true")
    return result(check, HealthState.IN_PROGRESS, f"{check.current}: false")


@functools.lru_cache(maxsize=512)
def _program(text: str) -> celpy.Runner:
    environment = celpy.Environment()
    return environment.program(environment.compile(text))


def _syntax_error(err: CELParseError) -> str:
    """Where the parser stopped: celpy's message is the text with a caret under that column."""
    lines = str(err).splitlines()
    caret = lines[1].find("^") if len(lines) > 1 else -1
    return f"syntax error at column {caret + 1}" if caret >= 0 else "syntax error"


def _eval_error(err: CELEvalError) -> str:
    """The cause, without the evaluation context celpy appends."""
    text = str(err.args[0]) if err.args else "evaluation failed"
    return text.split(" (in activation", 1)[0]


def _parts(found: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    def part(name: str) -> dict[str, Any]:
        value = found.get(name)
        return value if isinstance(value, dict) else {}

    return part("metadata"), part("spec"), part("status")


def _condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    return next((c for c in conditions if isinstance(c, dict) and c.get("type") == kind), None)
