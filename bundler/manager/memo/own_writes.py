"""The manager's own BundleDeployment writes, recognised when their watch events come back.

Before writing a BundleDeployment the bundle controller notes the spec and bundler labels it is
writing. When the informer then reports exactly that, the change is the manager's own and needs no
new planning pass; anything else (an edit by hand, a deletion) wakes the bundle to restore it.

Until the informer shows a written deployment again (whatever it shows), the write is awaited:
the status roll-ups it changes wait for it (bundler.manager.memo.placements), so they never count a
burst of creations from a cache that has seen only part of it. A write that failed or was not
needed is not awaited, and a resync stops awaiting every write (one whose object was deleted
before the cache ever showed it is never shown).

A write is kept only until its echo is recognised: a fleet's deployments would otherwise be held
twice, once here and once in the informer. An event that changes the spec again after that (its
generation) is someone else's.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping

from bundler.manager.observed.indexes import LabelsFingerprint, labels_fingerprint
from bundler.runtime.key import Key
from bundler.store.protocol import Obj


class OwnWrites:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # The spec and labels written, per deployment whose echo was not recognised yet.
        self._written: dict[Key, tuple[Obj, LabelsFingerprint]] = {}
        # The bundle of each write the informer has not shown yet, and their counts.
        self._awaited: dict[Key, str] = {}
        self._by_bundle: Counter[str] = Counter()
        self._by_workspace: Counter[str] = Counter()

    def expect(self, key: Key, spec: Obj, labels: Mapping[str, str], bundle: str) -> None:
        """`spec` is what is written: the caller does not change it after."""
        with self._lock:
            self._written[key] = (spec, labels_fingerprint(labels))
            self._unawait(key)
            self._awaited[key] = bundle
            self._by_bundle[bundle] += 1
            self._by_workspace[bundle.partition("/")[0]] += 1

    def shown(self, key: Key) -> None:
        """The informer shows the deployment (or its deletion): its write is no longer awaited.
        Also for a write that failed or was not needed."""
        with self._lock:
            self._unawait(key)

    def awaiting(self, bundle: str) -> bool:
        """Whether a write of the Bundle's deployments is not in the cache yet."""
        with self._lock:
            return self._by_bundle[bundle] > 0

    def awaiting_in(self, workspace: str) -> bool:
        """Whether a write of a deployment of the workspace's Bundles is not in the cache yet."""
        with self._lock:
            return self._by_workspace[workspace] > 0

    def stop_awaiting(self) -> None:
        with self._lock:
            self._awaited.clear()
            self._by_bundle.clear()
            self._by_workspace.clear()

    def _unawait(self, key: Key) -> None:
        bundle = self._awaited.pop(key, None)
        if bundle is None:
            return
        workspace = bundle.partition("/")[0]
        self._by_bundle[bundle] -= 1
        self._by_workspace[workspace] -= 1
        if not self._by_bundle[bundle]:
            del self._by_bundle[bundle]
        if not self._by_workspace[workspace]:
            del self._by_workspace[workspace]

    def is_echo(self, obj: Obj) -> bool:
        """Whether `obj` shows exactly the spec and labels the manager last wrote to it, the first
        time it does."""
        key = Key.of(obj)
        with self._lock:
            written = self._written.get(key)
            if written is None:
                return False
            spec, labels = written
            observed = obj.get("metadata", {}).get("labels") or {}
            echo = spec == obj.get("spec") and all(observed.get(k) == v for k, v in labels)
            if echo:
                del self._written[key]
            return echo

    def forget(self, key: Key) -> None:
        """The deployment is gone, or the write did not happen: no echo to wait for."""
        with self._lock:
            self._written.pop(key, None)
            self._unawait(key)
