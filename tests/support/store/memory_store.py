"""What the MemoryStore tests share: a Recorder of watch callbacks and a Bundle as stored."""

from __future__ import annotations

import threading

from bundler.store.protocol import Obj, WatchEvent


class Recorder:
    """Collects watch events as (type, name, resourceVersion), thread-safely."""

    def __init__(self) -> None:
        self.events: list[WatchEvent] = []
        self._lock = threading.Lock()

    def __call__(self, event: WatchEvent) -> None:
        with self._lock:
            self.events.append(event)

    @property
    def seen(self) -> list[tuple[str, str]]:
        return [(e.type.value, e.object["metadata"]["name"]) for e in self.events]

    @property
    def versions(self) -> list[int]:
        return [int(e.object["metadata"]["resourceVersion"]) for e in self.events]


def bundle(name: str, namespace: str = "ws", **fields: object) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace}, **fields}
