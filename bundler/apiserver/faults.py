"""Injected failures: answer the next matching requests with an error, for retry tests."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from bundler.api.resources import Resource, Verb
from bundler.apiserver.statuses import HttpError


@dataclass(frozen=True)
class Fault:
    """Fail `count` requests matching `verb` and `resource` (None matches any) with `code`."""

    code: int
    verb: Verb | None = None
    resource: Resource | None = None
    retry_after: int | None = None
    count: int = 1

    def matches(self, verb: Verb, resource: Resource) -> bool:
        return self.verb in (None, verb) and self.resource in (None, resource)

    def error(self) -> HttpError:
        return HttpError(
            self.code,
            f"injected failure {self.code} for a test",
            retry_after=self.retry_after,
        )


class FaultQueue:
    """Faults in the order they were injected; the first that matches a request answers it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[tuple[Fault, int]] = []

    def add(self, fault: Fault) -> None:
        if fault.count < 1:
            raise ValueError(f"a fault must fail at least one request, not {fault.count}")
        with self._lock:
            self._queue.append((fault, fault.count))

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()

    def take(self, verb: Verb, resource: Resource) -> Fault | None:
        """The fault that answers this request, if any, consuming one of its uses."""
        with self._lock:
            for index, (fault, remaining) in enumerate(self._queue):
                if fault.matches(verb, resource):
                    if remaining > 1:
                        self._queue[index] = (fault, remaining - 1)
                    else:
                        del self._queue[index]
                    return fault
        return None
