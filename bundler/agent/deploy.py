"""One BundleDeployment's round trip: decide, apply (or undeploy) downstream, write status back.

The decision and the status are bundler.core.agent.plan's pure functions; this module does the I/O
around them and turns store errors into apply outcomes:
- the Flux kinds not served: FluxNotInstalled (Ready=False too), retried with backoff;
- the credentials Secret missing on the management cluster: CredentialsNotFound, retried;
- (remote mode) a valuesFrom object missing or too large on the downstream cluster, (pull mode) a
  management values copy missing from the cluster namespace: ValuesUnavailable, retried;
- a write refused (Invalid, Forbidden): ApplyFailed with the server's message, retried; when the
  server names fields its Flux CRDs lack, FluxTooOld with the Flux that has them, retried;
- options that cannot become Flux objects: InvalidOptions, not retried until the spec changes;
- anything transient (unreachable, conflict): raised as is, nothing reported, retried.

The delivery of the BundleDeployment's options (bundler.core.delivery) says which objects to write
and reads readiness back from its workload object. Once Flux reports the release of the current
options Ready, the options' health checks are evaluated on the downstream cluster
(bundler.agent.health_checks), and `reconcile` says when to look at them again.

A BundleDeployment whose last reconcile changed nothing, with nothing it read changed since, is
settled (bundler.agent.settled): reconciling it again does nothing. One that reads what no cache
sees change (credentials, values copies, health-checked objects) is never settled.
"""

from __future__ import annotations

import contextlib
import logging

from pydantic import ValidationError

from bundler.agent.caches import (
    FLUX_KINDS,
    WORKLOADS,
    AgentCaches,
    Cached,
    FluxNotInstalledError,
)
from bundler.agent.config import AgentConfig
from bundler.agent.desired import (
    Desired,
    ValuesUnavailableError,
    desired_objects,
    downstream_values,
    keeps_release,
    management_copies,
    values_copies,
)
from bundler.agent.health_checks import ObjectReader, evaluate_checks, recheck_after
from bundler.agent.remote_values import DownstreamValues
from bundler.agent.settled import Reads, SettledDeployments
from bundler.agent.writer import DownstreamWriter
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.cluster import AgentMode
from bundler.api.health import HealthCheckResult, HealthState
from bundler.api.meta import ConditionStatus
from bundler.api.resources import BUNDLE_DEPLOYMENT, SECRET, Resource
from bundler.core.agent.plan import (
    APPLIED,
    ApplyOutcome,
    Decision,
    Observation,
    Reason,
    Step,
    decide,
    flux_not_installed_message,
    next_status,
    release_ready,
    status_changed,
    status_patch,
    unready_dependencies,
)
from bundler.core.delivery import Delivery, ReleaseReport
from bundler.core.delivery.registry import delivery_for
from bundler.core.flux.requirements import unknown_field_hint
from bundler.core.health import with_namespace
from bundler.core.state import ConditionType, condition
from bundler.errors import InvalidInputError, TransientError
from bundler.runtime.clock import Clock
from bundler.store.errors import Forbidden, Invalid, KindNotServed, NotFound
from bundler.store.memory_meta import rfc3339
from bundler.store.mergepatch import json_copy
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

FLUX_KIND_NAMES = [f"{res.plural}.{res.group}" for res in FLUX_KINDS]

# Outcomes that heal without a new spec: report them, then retry with backoff.
_RETRIED = frozenset(
    {
        Reason.FLUX_NOT_INSTALLED,
        Reason.FLUX_TOO_OLD,
        Reason.CREDENTIALS_NOT_FOUND,
        Reason.APPLY_FAILED,
        Reason.VALUES_UNAVAILABLE,
    }
)


class ReportedError(Exception):
    """The failure is reported on the BundleDeployment; `cause` is raised for the backoff."""

    def __init__(self, cause: TransientError) -> None:
        self.cause = cause
        super().__init__(str(cause))


class Deployer:
    def __init__(
        self,
        config: AgentConfig,
        management: Store,
        caches: AgentCaches,
        writer: DownstreamWriter,
        clock: Clock,
        values: DownstreamValues | None = None,
        objects: ObjectReader | None = None,
    ) -> None:
        self.config = config
        self.management = management
        self.caches = caches
        self.writer = writer
        self.clock = clock
        # Remote mode: where valuesFrom objects are read (None: this host cannot reach clusters).
        self.values = values
        # Where health checks read their objects (None: this host cannot reach the cluster).
        self.objects = objects
        self.settled = SettledDeployments(caches)

    # -- present BundleDeployments ------------------------------------------------------------

    def reconcile(self, observed: Cached) -> float | None:
        """Apply `observed` (unless paused or waiting) and write its status, unless it is
        settled; ValidationError when it cannot be read as a BundleDeployment. Returns clock
        seconds until its health checks are due again (None: it has none being looked at)."""
        if self.settled.holds(observed):
            return None
        self.settled.forget(observed["metadata"]["name"])
        bd = BundleDeployment.model_validate(json_copy(observed))
        delivery = delivery_for(bd.spec.options)
        reads = Reads(
            bd.metadata.name,
            bd.metadata.resourceVersion,
            tuple(sorted({dep.name for dep in bd.spec.options.dependsOn if dep.name})),
            delivery.workload,
            delivery.workload_name(bd),
        )
        seen = self.settled.look(reads)
        decision = decide(bd, unready_dependencies(bd, self._dependencies(reads)))
        outcome: ApplyOutcome | None = None
        changed = False
        release = self._cached_release(bd, delivery)
        if decision.step is Step.APPLY:
            outcome, written, changed = self._apply(bd, delivery)
            release = written or release
        report = delivery.read(release)
        health = None
        if bd.spec.options.healthChecks and release_ready(bd, decision, outcome, report):
            health = self._health(bd)
        changed = self._write_status(bd, decision, outcome, report, health) or changed
        if outcome is not None and outcome.reason in _RETRIED:
            raise ReportedError(TransientError(outcome.message, obj=_describe(bd)))
        if not changed and not self._reads_beyond_caches(bd):
            self.settled.remember(reads, seen)
        return None if health is None else recheck_after(health)

    def _health(self, bd: BundleDeployment) -> tuple[HealthCheckResult, ...]:
        # The manager fills each namespace in; a check without one is in the release's.
        release = bd.spec.options.namespace
        checks = [with_namespace(c, release) for c in bd.spec.options.healthChecks or []]
        if self.objects is None:
            unreachable = "cannot be evaluated: this remote agent cannot reach the cluster"
            return tuple(
                HealthCheckResult(
                    kind=c.kind,
                    namespace=c.namespace or "",
                    name=c.name,
                    state=HealthState.FAILED,
                    message=unreachable,
                )
                for c in checks
            )
        return evaluate_checks(checks, self.objects)

    def _dependencies(self, reads: Reads) -> list[BundleDeployment]:
        """The BundleDeployments of the bundles `reads` depends on that parse."""
        readable = []
        for bundle in reads.dependencies:
            for other in self.caches.deployments_of(bundle):
                try:
                    readable.append(BundleDeployment.model_validate(other))
                except ValidationError:
                    continue
        return readable

    def _reads_beyond_caches(self, bd: BundleDeployment) -> bool:
        """Whether reconciling `bd` reads what no cache holds: the credentials Secret and the
        management values copies (pull mode), the valuesFrom objects downstream (remote mode),
        the objects its health checks name."""
        options = bd.spec.options
        if options.healthChecks:
            return True
        if self.config.mode is AgentMode.REMOTE:
            return bool(downstream_values(bd))
        has_credentials = delivery_for(options).secret_ref(options) is not None
        return has_credentials or bool(options.managementValues)

    def _cached_release(self, bd: BundleDeployment, delivery: Delivery) -> Cached | None:
        # Not yet filled (a reconcile before the housekeeping one), the cache would report a
        # running release as missing; without the Flux kinds there is no workload to find.
        with contextlib.suppress(FluxNotInstalledError):
            self.caches.ensure_downstream(delivery.kinds)
        if not self.caches.downstream[delivery.workload].has_synced:
            return None
        return self.caches.live(delivery.workload, delivery.workload_name(bd))

    def _apply(
        self, bd: BundleDeployment, delivery: Delivery
    ) -> tuple[ApplyOutcome, Cached | None, bool]:
        """The outcome, the workload object as written, and whether anything had to change
        downstream (True also when the apply failed: nothing settles on a failure)."""
        try:
            values = self._values_copies(bd)
            desired = desired_objects(bd, self.config, self._credentials(bd), values)
        except InvalidInputError as err:
            return ApplyOutcome(Reason.INVALID_OPTIONS, str(err)), None, False
        except NotFound as err:
            message = f"repository credentials Secret not found in the cluster namespace: {err}"
            return ApplyOutcome(Reason.CREDENTIALS_NOT_FOUND, message), None, True
        except ValuesUnavailableError as err:
            return ApplyOutcome(Reason.VALUES_UNAVAILABLE, str(err)), None, True
        try:
            self.caches.ensure_downstream(delivery.kinds)
            written, changed = self._write(bd, desired)
        except (FluxNotInstalledError, KindNotServed) as err:
            kinds = err.kinds if isinstance(err, FluxNotInstalledError) else FLUX_KIND_NAMES
            message = flux_not_installed_message(kinds, delivery.install_hint)
            return ApplyOutcome(Reason.FLUX_NOT_INSTALLED, message), None, True
        except (Invalid, Forbidden, NotFound) as err:
            hint = unknown_field_hint(str(err)) if isinstance(err, Invalid) else None
            if hint is not None:
                return ApplyOutcome(Reason.FLUX_TOO_OLD, f"{hint}: {err}"), None, True
            return ApplyOutcome(Reason.APPLY_FAILED, str(err)), None, True
        return APPLIED, written, changed

    def _values_copies(self, bd: BundleDeployment) -> list[Obj]:
        if self.config.mode is not AgentMode.REMOTE:
            if not bd.spec.options.managementValues:
                return []
            return management_copies(bd, self.config, self._cluster_secret)
        if not downstream_values(bd):
            return []
        if self.values is None:
            raise InvalidInputError(
                "valuesFrom needs the downstream cluster, which this remote agent cannot reach",
                obj=_describe(bd),
                field="spec.options.helm.valuesFrom",
            )
        return values_copies(bd, self.config, self.values.get)

    def _cluster_secret(self, name: str) -> Obj | None:
        """A Secret of the cluster namespace (a copy the manager made), None when missing."""
        try:
            return self.management.get(SECRET, name, self.config.cluster_namespace)
        except NotFound:
            return None

    def _credentials(self, bd: BundleDeployment) -> Obj | None:
        ref = delivery_for(bd.spec.options).secret_ref(bd.spec.options)
        if ref is None or self.config.mode is AgentMode.REMOTE:
            return None
        return self.management.get(SECRET, ref, self.config.cluster_namespace)

    def _write(self, bd: BundleDeployment, desired: Desired) -> tuple[Cached, bool]:
        """The workload object as written, and whether anything had to change."""
        release: Cached | None = None
        changed = False
        for res, obj in desired.objects:
            written, wrote = self.writer.put(res, obj)
            changed = changed or wrote
            if res == desired.workload:
                release = written
        wanted = desired.names()
        for res, live in self.caches.owned_by(bd.metadata.name):
            if (res.plural, live["metadata"]["name"]) not in wanted:
                self._remove(res, live, keep_from_spec=None)
                changed = True
        return (release if release is not None else desired.release), changed

    def _write_status(
        self,
        bd: BundleDeployment,
        decision: Decision,
        outcome: ApplyOutcome | None,
        report: ReleaseReport,
        health: tuple[HealthCheckResult, ...] | None,
    ) -> bool:
        """Write the status `bd` should have; whether it differed."""
        now = rfc3339(self.clock.now())
        new = next_status(bd, Observation(decision, outcome, report, now, health))
        if not status_changed(bd.status, new):
            return False
        self.management.patch_status(
            BUNDLE_DEPLOYMENT, bd.metadata.name, status_patch(new), bd.metadata.namespace
        )
        return True

    def report_unreadable(self, observed: Cached, err: ValidationError) -> None:
        """A BundleDeployment that does not parse: say so on its Deployed condition."""
        meta = observed["metadata"]
        first = err.errors()[0] if err.errors() else {"loc": (), "msg": str(err)}
        where = ".".join(str(part) for part in first["loc"])
        message = f"the BundleDeployment cannot be read: {where}: {first['msg']}"
        previous = (observed.get("status") or {}).get("conditions") or []
        conditions = condition(
            ConditionType.DEPLOYED,
            ConditionStatus.FALSE,
            Reason.INVALID_OPTIONS,
            message,
            rfc3339(self.clock.now()),
            [],
            observed_generation=meta.get("generation"),
        )
        wire = [c.to_wire() for c in conditions]
        if [_timeless(c) for c in previous] == [_timeless(c) for c in wire]:
            return
        self.management.patch_status(
            BUNDLE_DEPLOYMENT, meta["name"], {"status": {"conditions": wire}}, meta["namespace"]
        )

    # -- gone BundleDeployments ---------------------------------------------------------------

    def undeploy(self, bd_name: str, observed: Cached | None) -> None:
        """Remove what was written for `bd_name`; releases of keepResources bundles stay."""
        self.settled.forget(bd_name)
        # Without the Flux kinds nothing of ours exists downstream but Secrets, whose cache starts.
        with contextlib.suppress(FluxNotInstalledError):
            self.caches.ensure_downstream(optional=FLUX_KINDS)
        keep_from_spec = _keeps_resources(observed)
        for res, live in self.caches.owned_by(bd_name):
            self._remove(res, live, keep_from_spec=keep_from_spec)

    def hand_over(self) -> bool:
        """Let go of every release: suspend and delete the workload objects (Flux leaves their
        releases installed), then delete their sources and Secrets. True once no workload object
        is left, not even one whose finalizer Flux has yet to remove."""
        self.settled.forget_all()
        try:
            self.caches.ensure_downstream(optional=FLUX_KINDS)
        except FluxNotInstalledError:
            return True
        for res, live in self.caches.owned():
            self._remove(res, live, keep_from_spec=True)
        return not self.writer.releases_left()

    def _remove(self, res: Resource, cached: Cached, *, keep_from_spec: bool | None) -> None:
        """Delete `cached`; a workload's release stays installed when the spec (if known) or else
        its keep-resources annotation says so. The annotation is read fresh: the cache may not
        hold the agent's latest write yet, and a stale copy must not decide an uninstall."""
        live = self.writer.current(res, cached) if res in WORKLOADS else cached
        if live is None:
            return
        keep = keep_from_spec if keep_from_spec is not None else keeps_release(live)
        self.writer.remove(res, live, keep_release=keep)


def _keeps_resources(observed: Cached | None) -> bool | None:
    if observed is None:
        return None
    options = (observed.get("spec") or {}).get("options") or {}
    return bool(options.get("keepResources", False))


def _describe(bd: BundleDeployment) -> str:
    return f"BundleDeployment {bd.metadata.namespace}/{bd.metadata.name}"


def _timeless(c: object) -> object:
    if isinstance(c, dict):
        return {k: v for k, v in c.items() if k != "lastTransitionTime"}
    return c
