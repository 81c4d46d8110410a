"""The manager's event recorder: Events decided by bundler.core.events, written once, bounded.

A status controller hands over the Events a transition calls for (after deciding the status it
writes); the recorder writes each admitted one as a core/v1 Event in the object's namespace. An
Event is information, never part of the work: one the budget refuses is dropped (and counted), and
one the API server refuses is logged and dropped, never retried, never failing the reconcile.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Sequence

from bundler.api.resources import EVENT
from bundler.core.events import EventBudget, EventSpec, event_object
from bundler.errors import BundlerError
from bundler.runtime.clock import Clock
from bundler.store.memory_meta import rfc3339
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)


def instance_name() -> str:
    """Who reports: the pod's name (its hostname) and the process."""
    return f"{socket.gethostname()}-{os.getpid()}"


class EventRecorder:
    def __init__(self, store: Store, clock: Clock, budget: EventBudget | None = None) -> None:
        self.store = store
        self.clock = clock
        self.budget = budget or EventBudget()
        self.instance = instance_name()
        self.written = 0
        self._lock = threading.Lock()

    def tell(self, involved: Obj, specs: Sequence[EventSpec]) -> None:
        """Write the Events `specs` about `involved` that the budget admits."""
        uid = str((involved.get("metadata") or {}).get("uid") or "")
        for spec in specs:
            with self._lock:
                admitted = self.budget.admit(uid, spec, self.clock.monotonic())
            if not admitted:
                continue
            event = event_object(involved, spec, rfc3339(self.clock.now()), self.instance)
            try:
                self.store.create(EVENT, event)
            except BundlerError as err:
                log.warning("event %s not written: %s", spec.reason.value, err)
                continue
            with self._lock:
                self.written += 1

    @property
    def dropped(self) -> int:
        with self._lock:
            return self.budget.dropped
