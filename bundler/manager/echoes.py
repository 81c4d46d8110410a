"""The manager's own BundleDeployment writes, recognised when their watch events come back.

Before writing a BundleDeployment the bundle controller notes the spec and bundler labels it is
writing. When the informer then reports exactly that, the change is the manager's own and needs no
new planning pass; anything else (an edit by hand, a deletion) wakes the bundle to restore it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from bundler.manager.writes import canonical
from bundler.runtime.key import Key
from bundler.store.protocol import Obj


class OwnWrites:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._written: dict[Key, tuple[str, dict[str, str]]] = {}

    def expect(self, key: Key, spec: Obj, labels: Mapping[str, str]) -> None:
        with self._lock:
            self._written[key] = (canonical(spec), dict(labels))

    def is_echo(self, obj: Obj) -> bool:
        """Whether `obj` shows exactly the spec and labels the manager last wrote to it."""
        with self._lock:
            written = self._written.get(Key.of(obj))
        if written is None:
            return False
        spec, labels = written
        observed = obj.get("metadata", {}).get("labels") or {}
        return all(observed.get(k) == v for k, v in labels.items()) and spec == canonical(
            obj.get("spec")
        )

    def forget(self, key: Key) -> None:
        with self._lock:
            self._written.pop(key, None)
