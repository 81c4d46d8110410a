"""The manager's controllers by name, so controllers and event routes can hand each other work.

Each stage is one runtime controller with its own keys: planning a Bundle is separate from rolling
up its status, so a deployment's status change costs a status roll-up, not a planning pass. Work
can also be deferred until an event (a Bundle's first plan) is released.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from enum import StrEnum

from bundler.runtime.controller import Controller
from bundler.runtime.key import Key


class Stage(StrEnum):
    BUNDLE = "bundle"
    BUNDLE_STATUS = "bundle-status"
    CLUSTER = "cluster"
    CLUSTER_STATUS = "cluster-status"
    GROUP_STATUS = "clustergroup-status"


class Work:
    def __init__(self) -> None:
        self._controllers: dict[Stage, Controller] = {}
        self._lock = threading.Lock()
        self._deferred: dict[str, set[tuple[Stage, Key]]] = {}

    def bind(self, stage: Stage, controller: Controller) -> None:
        self._controllers[stage] = controller

    def add(self, stage: Stage, key: Key) -> None:
        self._controllers[stage].enqueue(key)

    def add_all(self, stage: Stage, keys: Iterable[Key]) -> None:
        controller = self._controllers[stage]
        for key in keys:
            controller.enqueue(key)

    def defer(self, until: Iterable[str], stage: Stage, key: Key) -> None:
        """Run `key` again once any of the `until` events is released."""
        with self._lock:
            for event in until:
                self._deferred.setdefault(event, set()).add((stage, key))

    def release(self, event: str) -> None:
        """Enqueue everything deferred until `event`."""
        with self._lock:
            waiting = self._deferred.pop(event, set())
        for stage, key in waiting:
            self.add(stage, key)
