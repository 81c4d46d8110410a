"""Which BundleDeployments of a cluster wait on which bundle (dependsOn), for waking dependents.

Kept up to date from the BundleDeployment events themselves, so finding the dependents of a changed
BundleDeployment never copies the cache. A deleted BundleDeployment is forgotten by the reconcile
that sees it gone; until then it can only cause one harmless extra reconcile.
"""

from __future__ import annotations

import threading

from bundler.core.labels import LABEL_BUNDLE_NAME
from bundler.runtime.key import Key
from bundler.store.protocol import Obj


class DependencyIndex:
    def __init__(self) -> None:
        self._needs: dict[Key, frozenset[str]] = {}
        # bundle -> the BundleDeployments that depend on it (the reverse of `_needs`)
        self._needed_by: dict[str, set[Key]] = {}
        self._lock = threading.Lock()

    def dependents(self, obj: Obj) -> list[Key]:
        """Record what `obj` depends on; return the BundleDeployments depending on its bundle."""
        meta = obj.get("metadata") or {}
        bundle = (meta.get("labels") or {}).get(LABEL_BUNDLE_NAME) or meta.get("name")
        options = (obj.get("spec") or {}).get("options") or {}
        needs = frozenset(
            str(dep.get("name")) for dep in options.get("dependsOn") or [] if isinstance(dep, dict)
        )
        key = Key.of(obj)
        with self._lock:
            self._drop(key)
            if needs:
                self._needs[key] = needs
                for wanted in needs:
                    self._needed_by.setdefault(wanted, set()).add(key)
            return sorted(self._needed_by.get(bundle, ())) if isinstance(bundle, str) else []

    def forget(self, key: Key) -> None:
        with self._lock:
            self._drop(key)

    def _drop(self, key: Key) -> None:
        for wanted in self._needs.pop(key, ()):
            dependents = self._needed_by.get(wanted)
            if dependents is not None:
                dependents.discard(key)
                if not dependents:
                    del self._needed_by[wanted]
