"""A simulated Flux helm-controller: treats HelmReleases the way Flux does where bundler looks.

Per HelmRelease, as Flux's reconciler does:
- adds its finalizer `finalizers.fluxcd.io` first;
- on deletion uninstalls the release and removes the finalizer, unless the HelmRelease is suspended:
  then it removes the finalizer and leaves the release installed (what keepResources relies on);
- skips suspended HelmReleases;
- waits for `dependsOn` HelmReleases to be Ready (DependencyNotReady), for the chart source to exist
  (ArtifactFailed) and, in remote mode, for the kubeConfig Secret (RESTClientError);
- runs the install or upgrade: Ready Unknown/Progressing for `delay` clock seconds, then Ready and
  Released True (InstallSucceeded/UpgradeSucceeded) or False (InstallFailed/UpgradeFailed) from the
  FailurePolicy, a new history entry, and observedGeneration = the generation it released. A failed
  generation stays failed until the spec changes.

`releases()` is what Helm would list on the cluster: name, namespace, chart version, revision and
status. One instance serves one store (one simulated cluster, or the management cluster for remote
mode) as a controller on a shared runtime Host; it owns no thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bundler.api.resources import HELM_RELEASE, HELM_REPOSITORY, OCI_REPOSITORY, SECRET, Resource
from bundler.core.versions import tag_to_version
from bundler.runtime.controller import Result
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.sim.failures import FailurePolicy, ReleaseIdentity
from bundler.sim.flux_status import (
    DEFAULT_MAX_HISTORY,
    READY,
    FluxReason,
    ReleaseAttempt,
    action_for,
    not_ready,
    progressing,
    released,
)
from bundler.store.errors import NotFound
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

FLUX_FINALIZER = "finalizers.fluxcd.io"
_SOURCES: dict[str, Resource] = {r.kind: r for r in (HELM_REPOSITORY, OCI_REPOSITORY)}

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
class _Running:
    generation: int
    due: float


class SimulatedFlux:
    def __init__(
        self,
        host: Host,
        store: Store,
        cluster_of: ClusterOf,
        settings: FluxSettings | None = None,
        *,
        name: str = "flux",
    ) -> None:
        self.host = host
        self.store = store
        self.cluster_of = cluster_of
        self.settings = settings or FluxSettings()
        self.name = name
        self.informer = Informer(store, HELM_RELEASE, host.timers)
        self._installed: dict[tuple[str, str], InstalledRelease] = {}
        self._running: dict[Key, _Running] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        controller = self.host.add_controller(self.name, self.reconcile, primary=self.informer)
        controller.watch(self.informer, self._dependents)
        self.informer.start()

    def stop(self) -> None:
        self.host.remove_controller(self.name)
        self.informer.stop()

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
        obj = self.informer.get(key.namespace, key.name)
        if obj is None:
            self._forget(key)
            return None
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            self._finalize(key, obj, finalizers)
            return None
        if FLUX_FINALIZER not in finalizers:
            patch = {"metadata": {"finalizers": [*finalizers, FLUX_FINALIZER]}}
            self.store.patch(HELM_RELEASE, key.name, patch, key.namespace)
            return None
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if spec.get("suspend") or status.get("lastAttemptedGeneration") == meta["generation"]:
            self._forget(key)
            return None
        return self._release(key, obj)

    def _release(self, key: Key, obj: Obj) -> Result | None:
        generation = obj["metadata"]["generation"]
        blocked = self._blocker(obj)
        if blocked is not None:
            reason, message = blocked
            self._write(
                key, not_ready(obj.get("status") or {}, reason, message, generation, self._now())
            )
            return Result(requeue_after=self.settings.retry)
        with self._lock:
            running = self._running.get(key)
            if running is None or running.generation != generation:
                running = _Running(generation, self.host.clock.monotonic() + self.settings.delay)
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
        self._finish(key, obj)
        return None

    def _finish(self, key: Key, obj: Obj) -> None:
        spec, meta = obj.get("spec") or {}, obj["metadata"]
        name, namespace = _release_name(obj)
        chart, version = self._chart(obj)
        cluster, labels = self.cluster_of(obj)
        failure = self.settings.failures.failure(
            ReleaseIdentity(cluster, labels, f"{namespace}/{name}", version)
        )
        attempt = ReleaseAttempt(
            name=name,
            namespace=namespace,
            chart=chart,
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
                name, namespace, chart, version, int(latest["version"]), str(latest["status"])
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
        self.store.patch(HELM_RELEASE, key.name, {"metadata": {"finalizers": kept}}, key.namespace)

    def _forget(self, key: Key) -> None:
        with self._lock:
            self._running.pop(key, None)

    # -- what blocks a release ----------------------------------------------------------------

    def _blocker(self, obj: Obj) -> tuple[FluxReason, str] | None:
        spec, namespace = obj.get("spec") or {}, obj["metadata"]["namespace"]
        for dep in spec.get("dependsOn") or []:
            dep_ns = dep.get("namespace") or namespace
            if not self._is_ready(self.informer.get(dep_ns, dep["name"])):
                return (
                    FluxReason.DEPENDENCY_NOT_READY,
                    f"dependency '{dep_ns}/{dep['name']}' is not ready",
                )
        kind, name, source_ns = _source_ref(obj)
        if self._get(_SOURCES.get(kind), name, source_ns) is None:
            message = f"could not get HelmChart object: {kind} '{source_ns}/{name}' not found"
            return FluxReason.ARTIFACT_FAILED, message
        secret_ref = (spec.get("kubeConfig") or {}).get("secretRef")
        if secret_ref and self._get(SECRET, secret_ref["name"], namespace) is None:
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

    def _get(self, res: Resource | None, name: str, namespace: str) -> Obj | None:
        if res is None:
            return None
        try:
            return self.store.get(res, name, namespace)
        except NotFound:
            return None

    def _chart(self, obj: Obj) -> tuple[str, str]:
        """Chart name and version: from the chart template, or from the OCIRepository's tag."""
        spec = obj.get("spec") or {}
        template = (spec.get("chart") or {}).get("spec")
        if template:
            return str(template["chart"]), str(template.get("version", "0.0.0"))
        kind, name, namespace = _source_ref(obj)
        source = self._get(_SOURCES.get(kind), name, namespace) or {}
        url = str((source.get("spec") or {}).get("url", name))
        tag = str(((source.get("spec") or {}).get("ref") or {}).get("tag", "latest"))
        return url.rstrip("/").rsplit("/", 1)[-1], tag_to_version(tag)

    def _dependents(self, obj: Obj) -> list[Key]:
        namespace, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
        keys = []
        for other in self.informer.list(namespace):
            for dep in (other.get("spec") or {}).get("dependsOn") or []:
                if dep.get("name") == name and (dep.get("namespace") or namespace) == namespace:
                    keys.append(Key.of(other))
        return keys

    def _write(self, key: Key, status: Mapping[str, Any]) -> None:
        self.store.patch_status(HELM_RELEASE, key.name, {"status": dict(status)}, key.namespace)

    def _now(self) -> str:
        return rfc3339(self.host.clock.now())


def _release_name(obj: Obj) -> tuple[str, str]:
    """(release name, storage namespace) as Flux derives them."""
    spec, meta = obj.get("spec") or {}, obj["metadata"]
    target = spec.get("targetNamespace") or meta["namespace"]
    default_name = f"{target}-{meta['name']}" if spec.get("targetNamespace") else meta["name"]
    return spec.get("releaseName") or default_name, spec.get("storageNamespace") or target


def _source_ref(obj: Obj) -> tuple[str, str, str]:
    spec, namespace = obj.get("spec") or {}, obj["metadata"]["namespace"]
    ref = spec.get("chartRef") or ((spec.get("chart") or {}).get("spec") or {}).get("sourceRef")
    ref = ref or {}
    return (
        str(ref.get("kind", "")),
        str(ref.get("name", "")),
        str(ref.get("namespace") or namespace),
    )
