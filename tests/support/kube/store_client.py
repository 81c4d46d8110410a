"""What the KubeStore tests share: client options quick to exhaust (FAST), the bound on waits
(PATIENCE), a Recorder of watch callbacks that never lets a test hang, and a Bundle as sent."""

from __future__ import annotations

import queue
from typing import Any

from bundler.kube.retry import RetryPolicy
from bundler.kube.store import KubeOptions
from bundler.kube.transport import Timeouts
from bundler.store.protocol import WatchEvent

# Retries that are quick to exhaust, so the bound is reached in well under a second.
FAST = KubeOptions(
    retry=RetryPolicy(attempts=3, initial_delay=0.01, max_delay=0.05, budget=5.0),
    timeouts=Timeouts(connect=2.0, read=10.0),
)


# Longest a test waits for something that should happen promptly.
PATIENCE = 10.0


class Recorder:
    """Collects what a watch calls back with; `next_*` wait a bounded time for the next one."""

    def __init__(self) -> None:
        self.events: queue.SimpleQueue[WatchEvent] = queue.SimpleQueue()
        self.errors: queue.SimpleQueue[Exception] = queue.SimpleQueue()

    def on_event(self, event: WatchEvent) -> None:
        self.events.put(event)

    def on_error(self, error: Exception) -> None:
        self.errors.put(error)

    def next_event(self) -> WatchEvent:
        return self.events.get(timeout=PATIENCE)

    def next_events(self, count: int) -> list[tuple[str, str]]:
        return [summary(self.next_event()) for _ in range(count)]

    def next_error(self) -> Exception:
        return self.errors.get(timeout=PATIENCE)


def summary(event: WatchEvent) -> tuple[str, str]:
    return event.type.value, event.object["metadata"]["name"]


def bundle(name: str, namespace: str = "ws", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "bundler.dev/v1alpha1",
        "kind": "Bundle",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"helm": {"chart": "podinfo"}},
    }
