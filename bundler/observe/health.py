"""Named health checks behind /healthz (alive) and /readyz (ready to serve).

A check returns None while healthy, else one line saying what is wrong. Checks run on the HTTP
server's thread at every probe, so they only read state the process already has in memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

Check = Callable[[], str | None]


class HealthChecks:
    def __init__(self) -> None:
        self._checks: dict[str, Check] = {}
        self._lock = threading.Lock()

    def add(self, name: str, check: Check) -> None:
        with self._lock:
            self._checks[name] = check

    def problems(self) -> list[str]:
        """`name: problem` for every failing check; a check that raises fails with its error."""
        with self._lock:
            checks = list(self._checks.items())
        found = []
        for name, check in checks:
            try:
                problem = check()
            except Exception as error:  # a broken check must fail the probe, not the server
                problem = f"check failed: {type(error).__name__}: {error}"
            if problem is not None:
                found.append(f"{name}: {problem}")
        return found
