"""A simulated Flux kustomize-controller: treats Kustomizations the way Flux does where bundler
looks.

It serves the kinds of the Kustomize delivery (bundler.core.delivery.kustomize.KUSTOMIZE): its
workload, the Kustomization, and its sources (OCIRepository, GitRepository);
bundler.sim.controllers registers it for that delivery.

Per Kustomization, as Flux's reconciler does:
- adds its finalizer `finalizers.fluxcd.io` first;
- on deletion prunes what it applied (when `prune` is on and it is not suspended) and removes
  the finalizer; a suspended one leaves its objects (what keepResources relies on);
- skips suspended Kustomizations;
- waits for the source to exist (ArtifactFailed) and, in remote mode, for the kubeConfig Secret;
- applies the source's revision (`<tag>@sha256:<digest>` for an OCIRepository,
  `<branch or tag>@sha1:<commit>` for a GitRepository, the digest made up from the source's
  spec): Ready Unknown/Progressing for `delay` clock seconds, then Ready True
  (ReconciliationSucceeded) with `lastAppliedRevision`, or False (ReconciliationFailed) as the
  FailurePolicy says for the tag, and observedGeneration = the generation tried;
- applies again when the source's revision changes without its spec changing: a source event
  wakes the Kustomizations that refer to it, as source-controller's new artifact does.

`applied()` is what the cluster runs: the revision each Kustomization applied. One instance serves
one store as a controller on a shared runtime Host; it owns no thread.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bundler.api.resources import SECRET, Resource
from bundler.core.delivery.kustomize import KUSTOMIZE
from bundler.runtime.controller import Controller, Result
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.sim.failures import ReleaseIdentity
from bundler.sim.helm_controller import ClusterOf, FluxSettings
from bundler.sim.sourced_controller import FLUX_FINALIZER, SourcedController, SourceRef
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Obj, Store

_WORKLOAD = KUSTOMIZE.workload
_SOURCES: dict[str, Resource] = {r.kind: r for r in KUSTOMIZE.sources}


@dataclass(frozen=True)
class _Running:
    """An apply under way: of which generation and revision, and when it is done."""

    generation: int
    revision: str
    due: float


class SimulatedKustomizeController(SourcedController):
    def __init__(
        self,
        host: Host,
        store: Store,
        cluster_of: ClusterOf,
        settings: FluxSettings | None = None,
        *,
        name: str = "flux-kustomize",
    ) -> None:
        super().__init__(host, store, _WORKLOAD, _SOURCES, name)
        self.cluster_of = cluster_of
        self.settings = settings or FluxSettings()
        self._applied: dict[tuple[str, str], str] = {}
        self._running: dict[Key, _Running] = {}

    def source_ref(self, obj: Obj) -> SourceRef:
        return _source_ref(obj)

    def watch_more(self, controller: Controller) -> None:
        """None: without dependsOn, a Kustomization waits for its source alone."""

    def applied(self) -> dict[tuple[str, str], str]:
        """The revision each Kustomization applied on this cluster, by (namespace, name)."""
        with self._lock:
            return dict(self._applied)

    def busy(self) -> bool:
        """Whether an apply is under way (its result not written yet)."""
        with self._lock:
            return bool(self._running)

    # -- reconcile ----------------------------------------------------------------------------

    def reconcile(self, key: Key) -> Result | None:
        obj = self.admitted(key)
        if obj is None:
            return None
        generation = obj["metadata"]["generation"]
        status = obj.get("status") or {}
        source = self.source_of(obj)
        blocked = self._blocker(obj, source)
        if source is None or blocked is not None:
            reason, message = blocked or ("ArtifactFailed", "the source is not ready")
            self._write(key, self._condition(status, "False", reason, message, generation))
            return Result(requeue_after=self.settings.retry)
        revision = source_revision(source)
        done = status.get("lastAttemptedRevision") == revision
        if done and status.get("observedGeneration") == generation:
            self._forget(key)
            return None
        return self._apply(key, obj, generation, revision)

    def _apply(self, key: Key, obj: Obj, generation: int, revision: str) -> Result | None:
        with self._lock:
            running = self._running.get(key)
            started = running is None or (running.generation, running.revision) != (
                generation,
                revision,
            )
            if running is None or started:
                running = _Running(
                    generation, revision, self.host.clock.monotonic() + self.settings.delay
                )
                self._running[key] = running
        wait = running.due - self.host.clock.monotonic()
        status = obj.get("status") or {}
        if wait > 0:
            if started:
                message = f"Reconciliation in progress: applying revision {revision}"
                self._write(key, self._condition(status, "Unknown", "Progressing", message, None))
            return Result(requeue_after=wait)
        cluster, labels = self.cluster_of(obj)
        version = revision.partition("@")[0]
        failure = self.settings.failures.failure(
            ReleaseIdentity(cluster, labels, f"{key.namespace}/{key.name}", version)
        )
        if failure is not None:
            written = self._condition(status, "False", "ReconciliationFailed", failure, generation)
        else:
            message = f"Applied revision: {revision}"
            written = self._condition(
                status, "True", "ReconciliationSucceeded", message, generation
            )
            written["lastAppliedRevision"] = revision
        self._write(key, {**written, "lastAttemptedRevision": revision})
        with self._lock:
            self._running.pop(key, None)
            if failure is None:
                self._applied[(key.namespace, key.name)] = revision
        return None

    def _finalize(self, key: Key, obj: Obj, finalizers: list[str]) -> None:
        if FLUX_FINALIZER not in finalizers:
            return
        spec = obj.get("spec") or {}
        if spec.get("prune", True) and not spec.get("suspend"):
            with self._lock:
                self._applied.pop((key.namespace, key.name), None)
        self._forget(key)
        kept = [f for f in finalizers if f != FLUX_FINALIZER]
        self.store.patch(_WORKLOAD, key.name, {"metadata": {"finalizers": kept}}, key.namespace)

    def _forget(self, key: Key) -> None:
        with self._lock:
            self._running.pop(key, None)

    def _blocker(self, obj: Obj, source: Obj | None) -> tuple[str, str] | None:
        if source is None:
            kind, name, namespace = _source_ref(obj)
            return "ArtifactFailed", f"Source '{kind}/{namespace}/{name}' not found"
        namespace = obj["metadata"]["namespace"]
        secret_ref = ((obj.get("spec") or {}).get("kubeConfig") or {}).get("secretRef")
        if secret_ref and self.get(SECRET, secret_ref["name"], namespace) is None:
            message = (
                f"could not get kubeconfig Secret '{namespace}/{secret_ref['name']}': not found"
            )
            return "ReconciliationFailed", message
        return None

    def _condition(
        self,
        status: Mapping[str, Any],
        state: str,
        reason: str,
        message: str,
        generation: int | None,
    ) -> dict[str, Any]:
        """`status` with its Ready condition set; observedGeneration set when `generation` is
        (a generation Flux finished with, applied or failed)."""
        ready: dict[str, Any] = {
            "type": "Ready",
            "status": state,
            "reason": reason,
            "message": message,
            "lastTransitionTime": rfc3339(self.host.clock.now()),
        }
        out = {**status, "conditions": [ready]}
        if generation is not None:
            ready["observedGeneration"] = generation
            out["observedGeneration"] = generation
        return out

    def _write(self, key: Key, status: Mapping[str, Any]) -> None:
        self.store.patch_status(_WORKLOAD, key.name, {"status": dict(status)}, key.namespace)


def source_revision(source: Obj) -> str:
    """The revision source-controller would give the source's artifact: the tag (or branch) and a
    digest made up from the source's spec, so another spec is another revision."""
    spec = source.get("spec") or {}
    ref = spec.get("ref") or {}
    digest = hashlib.sha256(repr(sorted(spec.items())).encode()).hexdigest()
    if source.get("kind") == "OCIRepository":
        return f"{ref.get('tag', 'latest')}@sha256:{digest}"
    name = ref.get("tag") or ref.get("branch") or ref.get("semver") or "master"
    return f"{name}@sha1:{digest[:40]}"


def _source_ref(obj: Obj) -> SourceRef:
    spec, namespace = obj.get("spec") or {}, obj["metadata"]["namespace"]
    ref = spec.get("sourceRef") or {}
    return (
        str(ref.get("kind", "")),
        str(ref.get("name", "")),
        str(ref.get("namespace") or namespace),
    )
