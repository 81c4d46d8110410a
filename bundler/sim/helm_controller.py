"""A simulated Flux helm-controller: treats HelmReleases the way Flux does where bundler looks.

It serves the kinds of the Helm delivery (bundler.core.delivery.helm.HELM): its workload, the
HelmRelease, and its chart sources; bundler.sim.controllers registers it for that delivery.

Per HelmRelease, as Flux's reconciler does:
- adds its finalizer `finalizers.fluxcd.io` first;
- on deletion uninstalls the release and removes the finalizer, unless the HelmRelease is suspended:
  then it removes the finalizer and leaves the release installed (what keepResources relies on);
- skips suspended HelmReleases;
- waits for `dependsOn` HelmReleases to be Ready (DependencyNotReady), for the chart source to exist
  (ArtifactFailed) and, in remote mode, for the kubeConfig Secret (RESTClientError);
- runs the install or upgrade: Ready Unknown/Progressing for `delay` clock seconds, then Ready and
  Released True (InstallSucceeded/UpgradeSucceeded) or False (InstallFailed/UpgradeFailed) from the
  FailurePolicy, a new history entry, and observedGeneration = the generation it released;
- releases again when the chart version changes without the spec changing: it watches the
  HelmRepositories and OCIRepositories and wakes the HelmReleases that refer to them, so a new
  OCIRepository tag upgrades the release like source-controller's new artifact does. A failed
  attempt stays failed until the spec or the chart version changes.

`releases()` is what Helm would list on the cluster: name, namespace, chart version, revision and
status. One instance serves one store (one simulated cluster, or the management cluster for remote
mode) as a controller on a shared runtime Host; it owns no thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bundler.api.resources import SECRET, Resource
from bundler.core.delivery.helm import HELM
from bundler.core.versions import tag_to_version
from bundler.runtime.controller import Controller, Result
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.sim.failures import FailurePolicy, ReleaseIdentity
from bundler.sim.helm_controller_status import (
    DEFAULT_MAX_HISTORY,
    READY,
    FluxReason,
    ReleaseAttempt,
    action_for,
    not_ready,
    progressing,
    released,
)
from bundler.sim.sourced_controller import FLUX_FINALIZER, SourcedController, SourceRef
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

_RELEASE = HELM.workload
_SOURCES: dict[str, Resource] = {r.kind: r for r in HELM.sources}

# (workspace/cluster, cluster labels) of the cluster a HelmRelease deploys to.
ClusterOf = Callable[[Obj], tuple[str, Mapping[str, str]]]


@dataclass(frozen=True)
class FluxSettings:
    """`delay`: clock seconds a Helm action takes; `retry`: when a blocked release tries again."""

    delay: float = 0.0
    retry: float = 5.0
    failures: FailurePolicy = field(default_factory=FailurePolicy)


@dataclass(frozen=True)
class InstalledRelease:
    name: str
    namespace: str
    chart: str
    chart_version: str
    revision: int
    status: str


@dataclass(frozen=True)
class _Chart:
    """The chart a Helm action releases."""

    name: str
    version: str


@dataclass(frozen=True)
class _Running:
    """A Helm action under way: what it releases and when it is done."""

    generation: int
    chart: _Chart
    due: float


class SimulatedHelmController(SourcedController):
    def __init__(
        self,
        host: Host,
        store: Store,
        cluster_of: ClusterOf,
        settings: FluxSettings | None = None,
        *,
        name: str = "flux",
    ) -> None:
        super().__init__(host, store, _RELEASE, _SOURCES, name)
        self.cluster_of = cluster_of
        self.settings = settings or FluxSettings()
        self._installed: dict[tuple[str, str], InstalledRelease] = {}
        self._running: dict[Key, _Running] = {}

    def watch_more(self, controller: Controller) -> None:
        controller.watch(self.informer, self._dependents)

    def source_ref(self, obj: Obj) -> SourceRef:
        return _source_ref(obj)

    def releases(self) -> dict[tuple[str, str], InstalledRelease]:
        """The Helm releases installed on this cluster, by (namespace, name)."""
        with self._lock:
            return dict(self._installed)

    def busy(self) -> bool:
        """Whether a Helm action is running (its result not written yet)."""
        with self._lock:
            return bool(self._running)

    # -- reconcile ----------------------------------------------------------------------------

    def reconcile(self, key: Key) -> Result | None:
        obj = self.admitted(key)
        if obj is None:
            return None
        source = self.source_of(obj)
        chart = self._chart(obj, source)
        if _attempted(obj, chart):
            self._forget(key)
            return None
        return self._release(key, obj, source, chart)

    def _release(
        self, key: Key, obj: Obj, source: Obj | None, chart: _Chart | None
    ) -> Result | None:
        generation = obj["metadata"]["generation"]
        blocked = self._blocker(obj, source)
        if chart is None or blocked is not None:
            # A chart is missing only with its source, which _blocker reports already.
            reason, message = blocked or _source_missing(obj)
            self._write(
                key, not_ready(obj.get("status") or {}, reason, message, generation, self._now())
            )
            return Result(requeue_after=self.settings.retry)
        with self._lock:
            running = self._running.get(key)
            if running is None or (running.generation, running.chart) != (generation, chart):
                due = self.host.clock.monotonic() + self.settings.delay
                running = _Running(generation, chart, due)
                self._running[key] = running
                started = True
            else:
                started = False
        wait = running.due - self.host.clock.monotonic()
        if wait > 0:
            if started:
                status = obj.get("status") or {}
                name, namespace = _release_name(obj)
                action = action_for(status.get("history") or [], name, namespace)
                self._write(key, progressing(status, action, generation, self._now()))
            return Result(requeue_after=wait)
        self._finish(key, obj, chart)
        return None

    def _finish(self, key: Key, obj: Obj, chart: _Chart) -> None:
        spec, meta = obj.get("spec") or {}, obj["metadata"]
        name, namespace = _release_name(obj)
        version = chart.version
        cluster, labels = self.cluster_of(obj)
        failure = self.settings.failures.failure(
            ReleaseIdentity(cluster, labels, f"{namespace}/{name}", version)
        )
        attempt = ReleaseAttempt(
            name=name,
            namespace=namespace,
            chart=chart.name,
            chart_version=version,
            values=spec.get("values") or {},
            generation=meta["generation"],
            failure=failure,
            now=self._now(),
        )
        max_history = int(spec.get("maxHistory") or DEFAULT_MAX_HISTORY)
        status = released(obj.get("status") or {}, attempt, max_history)
        self._write(key, status)
        latest = status["history"][0]
        with self._lock:
            self._running.pop(key, None)
            self._installed[(namespace, name)] = InstalledRelease(
                name, namespace, chart.name, version, int(latest["version"]), str(latest["status"])
            )

    def _finalize(self, key: Key, obj: Obj, finalizers: list[str]) -> None:
        if FLUX_FINALIZER not in finalizers:
            return
        if not (obj.get("spec") or {}).get("suspend"):
            with self._lock:
                name, namespace = _release_name(obj)
                self._installed.pop((namespace, name), None)
        self._forget(key)
        kept = [f for f in finalizers if f != FLUX_FINALIZER]
        self.store.patch(_RELEASE, key.name, {"metadata": {"finalizers": kept}}, key.namespace)

    def _forget(self, key: Key) -> None:
        with self._lock:
            self._running.pop(key, None)

    # -- what blocks a release ----------------------------------------------------------------

    def _blocker(self, obj: Obj, source: Obj | None) -> tuple[FluxReason, str] | None:
        spec, namespace = obj.get("spec") or {}, obj["metadata"]["namespace"]
        for dep in spec.get("dependsOn") or []:
            dep_ns = dep.get("namespace") or namespace
            if not self._is_ready(self.informer.get(dep_ns, dep["name"])):
                return (
                    FluxReason.DEPENDENCY_NOT_READY,
                    f"dependency '{dep_ns}/{dep['name']}' is not ready",
                )
        if source is None:
            return _source_missing(obj)
        secret_ref = (spec.get("kubeConfig") or {}).get("secretRef")
        if secret_ref and self.get(SECRET, secret_ref["name"], namespace) is None:
            message = (
                f"could not get kubeconfig Secret '{namespace}/{secret_ref['name']}': not found"
            )
            return FluxReason.REST_CLIENT_ERROR, message
        return None

    @staticmethod
    def _is_ready(dep: Obj | None) -> bool:
        if dep is None:
            return False
        status = dep.get("status") or {}
        if status.get("observedGeneration") != dep["metadata"].get("generation"):
            return False
        conditions = status.get("conditions") or []
        return any(c.get("type") == READY and c.get("status") == "True" for c in conditions)

    @staticmethod
    def _chart(obj: Obj, source: Obj | None) -> _Chart | None:
        """The chart to release: from the chart template, or from the OCIRepository's tag.

        None when the chart comes from a source that does not exist: nothing can be released.
        """
        template = ((obj.get("spec") or {}).get("chart") or {}).get("spec")
        if template:
            return _Chart(str(template["chart"]), str(template.get("version", "0.0.0")))
        if source is None:
            return None
        spec = source.get("spec") or {}
        url = str(spec.get("url", source["metadata"]["name"]))
        tag = str((spec.get("ref") or {}).get("tag", "latest"))
        return _Chart(url.rstrip("/").rsplit("/", 1)[-1], tag_to_version(tag))

    def _dependents(self, obj: Obj) -> list[Key]:
        namespace, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
        keys = []
        for other in self.informer.views(namespace):
            for dep in (other.get("spec") or {}).get("dependsOn") or []:
                if dep.get("name") == name and (dep.get("namespace") or namespace) == namespace:
                    keys.append(Key.of(other))
        return keys

    def _write(self, key: Key, status: Mapping[str, Any]) -> None:
        self.store.patch_status(_RELEASE, key.name, {"status": dict(status)}, key.namespace)

    def _now(self) -> str:
        return rfc3339(self.host.clock.now())


def _attempted(obj: Obj, chart: _Chart | None) -> bool:
    """Whether this generation was tried with this chart version (nothing new to release).

    Without a chart (its source is gone) only the generation counts, as before the source went.
    """
    status = obj.get("status") or {}
    if status.get("lastAttemptedGeneration") != obj["metadata"]["generation"]:
        return False
    return chart is None or status.get("lastAttemptedRevision") == chart.version


def _source_missing(obj: Obj) -> tuple[FluxReason, str]:
    kind, name, namespace = _source_ref(obj)
    message = f"could not get HelmChart object: {kind} '{namespace}/{name}' not found"
    return FluxReason.ARTIFACT_FAILED, message


def _release_name(obj: Obj) -> tuple[str, str]:
    """(release name, storage namespace) as Flux derives them."""
    spec, meta = obj.get("spec") or {}, obj["metadata"]
    target = spec.get("targetNamespace") or meta["namespace"]
    default_name = f"{target}-{meta['name']}" if spec.get("targetNamespace") else meta["name"]
    return spec.get("releaseName") or default_name, spec.get("storageNamespace") or target


def _source_ref(obj: Obj) -> SourceRef:
    spec, namespace = obj.get("spec") or {}, obj["metadata"]["namespace"]
    ref = spec.get("chartRef") or ((spec.get("chart") or {}).get("spec") or {}).get("sourceRef")
    ref = ref or {}
    return (
        str(ref.get("kind", "")),
        str(ref.get("name", "")),
        str(ref.get("namespace") or namespace),
    )
