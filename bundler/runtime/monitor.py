"""The one lock a host's timers and work queue share, so "is anything left to do" has one answer.

Work moves between the timers (a due requeue becomes a queued key) and the queue (a reconcile
schedules a requeue before it is marked done). Checking the two under separate locks could miss an
item in flight between them; under one lock the check sees a consistent picture. `changed` is
notified on every such move, so waiting for idleness needs no polling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Monitor:
    def __init__(self) -> None:
        # Re-entrant: a timer callback or a reconcile may add to the queue from inside a section
        # that already holds the lock.
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)

    def condition(self) -> threading.Condition:
        """A further condition on the shared lock, for waiters that want narrower wake-ups."""
        return threading.Condition(self.lock)

    def notify(self) -> None:
        """Call with the lock held, after any change that may make the host idle."""
        self.changed.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float | None) -> bool:
        """Wait (real seconds) until `predicate()` holds; it is evaluated under the lock."""
        with self.lock:
            return self.changed.wait_for(predicate, timeout)
