"""Which structural schema governs each kind the API server serves.

A CustomResourceDefinition stored in the server (`kubectl apply -f crds/`) governs its kind, by its
`<plural>.<group>` name and the version requested. Without one, bundler's own kinds are governed by
the CRDs bundler generates (bundler.api.crdgen), as on a cluster where `crds/` is installed. Any
other kind has no schema and is stored as sent: the built-in kinds, and Flux's and Cluster API's
until their CRDs are applied. Stored CRDs are followed with a watch on the store, so a schema takes
effect from the next request; each is compiled once per resourceVersion.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping

from bundler.api.crdgen import CRDS, openapi_schema
from bundler.api.resources import CUSTOM_RESOURCE_DEFINITION, Resource
from bundler.apiserver.structural import Structural, compile_schema
from bundler.store.errors import KindNotServed
from bundler.store.memory import MemoryStore
from bundler.store.protocol import EventType, Obj, Watch, WatchEvent

# (group, version, plural): how kinds are told apart here.
_KindKey = tuple[str, str, str]


class CustomResourceSchemas:
    """The schemas of the served kinds; start() follows the stored CRDs until stop()."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._stored: dict[str, Obj] = {}
        self._compiled: dict[tuple[str, str, str], Structural | None] = {}
        self._watch: Watch | None = None

    def start(self) -> None:
        try:
            listed = self._store.list(CUSTOM_RESOURCE_DEFINITION)
        except KindNotServed:
            return  # a store without CRDs: only bundler's own schemas apply
        with self._lock:
            for crd in listed.items:
                self._stored[crd["metadata"]["name"]] = crd
        self._watch = self._store.watch(
            CUSTOM_RESOURCE_DEFINITION, self._changed, resource_version=listed.resource_version
        )

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
            self._watch = None

    def of(self, res: Resource) -> Structural | None:
        """The schema of `res`, None for a kind without one."""
        if not res.group:
            return None
        name = f"{res.plural}.{res.group}"
        with self._lock:
            crd = self._stored.get(name)
        if crd is not None:
            stored = self._compiled_version(crd, res.version)
            if stored is not None:
                return stored
        return _generated().get((res.group, res.version, res.plural))

    def _changed(self, event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        with self._lock:
            for key in [k for k in self._compiled if k[0] == name]:
                del self._compiled[key]
            if event.type is EventType.DELETED:
                self._stored.pop(name, None)
            else:
                self._stored[name] = event.object

    def _compiled_version(self, crd: Obj, version: str) -> Structural | None:
        key = (crd["metadata"]["name"], str(crd["metadata"].get("resourceVersion")), version)
        with self._lock:
            if key in self._compiled:
                return self._compiled[key]
        compiled = _version_schema(crd, version)
        with self._lock:
            self._compiled[key] = compiled
        return compiled


def _version_schema(crd: Obj, version: str) -> Structural | None:
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, Mapping) else None
    for entry in versions if isinstance(versions, list) else ():
        if isinstance(entry, Mapping) and entry.get("name") == version:
            validation = entry.get("schema")
            schema = validation.get("openAPIV3Schema") if isinstance(validation, Mapping) else None
            return compile_schema(schema) if isinstance(schema, Mapping) else None
    return None


@functools.cache
def _generated() -> dict[_KindKey, Structural]:
    return {
        (spec.resource.group, spec.resource.version, spec.resource.plural): compile_schema(
            openapi_schema(spec.model)
        )
        for spec in CRDS
    }
