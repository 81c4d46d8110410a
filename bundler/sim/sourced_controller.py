"""What the simulated Flux controllers share (bundler.sim.helm_controller,
bundler.sim.kustomize_controller): a controller of one workload kind on a shared runtime Host, the
informers of that kind and of the source kinds it reads, and which source each workload object
refers to, so that a source event (a new tag, a new artifact) wakes exactly the workloads reading
it, without a scan.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from functools import partial

from bundler.api.resources import Resource
from bundler.runtime.controller import Controller, Result
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.runtime.key import Key
from bundler.store.errors import NotFound
from bundler.store.protocol import EventType, Obj, Store

# The finalizer Flux's controllers put on the objects they reconcile.
FLUX_FINALIZER = "finalizers.fluxcd.io"

# (kind, name, namespace) of the source a workload object reads.
SourceRef = tuple[str, str, str]


class SourcedController(ABC):
    """A simulated controller of `workload` objects that read `sources` (by kind)."""

    def __init__(
        self,
        host: Host,
        store: Store,
        workload: Resource,
        sources: Mapping[str, Resource],
        name: str,
    ) -> None:
        self.host = host
        self.store = store
        self.name = name
        self.workload = workload
        self.source_kinds = dict(sources)
        self.informer = Informer(store, workload, host.timers)
        self.sources = {kind: Informer(store, res, host.timers) for kind, res in sources.items()}
        self._source_refs: dict[Key, SourceRef] = {}
        self._index_handler: int | None = None
        self._lock = threading.Lock()

    @abstractmethod
    def reconcile(self, key: Key) -> Result | None: ...

    @abstractmethod
    def source_ref(self, obj: Obj) -> SourceRef:
        """The source `obj` (a workload object) reads."""

    @abstractmethod
    def watch_more(self, controller: Controller) -> None:
        """The controller's watches beyond its workload and sources."""

    @abstractmethod
    def _finalize(self, key: Key, obj: Obj, finalizers: list[str]) -> None:
        """A workload object being deleted: what Flux does before letting it go."""

    @abstractmethod
    def _forget(self, key: Key) -> None:
        """Drop what is kept about a workload object no longer to be acted on."""

    def admitted(self, key: Key) -> Obj | None:
        """The workload object to act on, or None after doing what Flux does first: forget one
        gone or suspended, finalize one being deleted, add Flux's finalizer to a new one."""
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
            self.store.patch(self.workload, key.name, patch, key.namespace)
            return None
        if (obj.get("spec") or {}).get("suspend"):
            self._forget(key)
            return None
        return obj

    def start(self) -> None:
        controller = self.host.add_controller(self.name, self.reconcile, primary=self.informer)
        self.watch_more(controller)
        for kind, informer in self.sources.items():
            controller.watch(informer, partial(self._referring_to, kind))
        self._index_handler = self.informer.add_handler(self._index_source_ref)
        self.informer.start()
        for informer in self.sources.values():
            informer.start()

    def stop(self) -> None:
        if self._index_handler is not None:
            self.informer.remove_handler(self._index_handler)
            self._index_handler = None
        self.host.remove_controller(self.name)
        self.informer.stop()
        for informer in self.sources.values():
            informer.stop()

    def get(self, res: Resource | None, name: str, namespace: str) -> Obj | None:
        """The object from the store, or None (also for no kind at all)."""
        if res is None:
            return None
        try:
            return self.store.get(res, name, namespace)
        except NotFound:
            return None

    def source_of(self, obj: Obj) -> Obj | None:
        """The source object `obj` reads, if it exists."""
        kind, name, namespace = self.source_ref(obj)
        return self.get(self.source_kinds.get(kind), name, namespace)

    def _index_source_ref(self, event: EventType, obj: Obj) -> None:
        key = Key.of(obj)
        with self._lock:
            if event is EventType.DELETED:
                self._source_refs.pop(key, None)
            else:
                self._source_refs[key] = self.source_ref(obj)

    def _referring_to(self, kind: str, source: Obj) -> list[Key]:
        """The workload objects that read `source` (a `kind` object)."""
        meta = source["metadata"]
        wanted = (kind, meta["name"], meta.get("namespace", ""))
        with self._lock:
            return [key for key, ref in self._source_refs.items() if ref == wanted]
