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
        self._lock = threading.Lock()

    def dependents(self, obj: Obj) -> list[Key]:
        """Record what `obj` depends on; return the BundleDeployments depending on its bundle."""
        meta = obj.get("metadata") or {}
        bundle = (meta.get("labels") or {}).get(LABEL_BUNDLE_NAME) or meta.get("name")
        options = (obj.get("spec") or {}).get("options") or {}
        needs = frozenset(
            str(dep.get("name")) for dep in options.get("dependsOn") or [] if isinstance(dep, dict)
        )
        with self._lock:
            if needs:
                self._needs[Key.of(obj)] = needs
            else:
                self._needs.pop(Key.of(obj), None)
            return sorted(key for key, wanted in self._needs.items() if bundle in wanted)

    def forget(self, key: Key) -> None:
        with self._lock:
            self._needs.pop(key, None)
