"""Server-sent events: the FleetModel's changes fanned out to every open page.

One publisher thread wakes when the model changes, waits COALESCE_SECONDS so that a burst (a
rollout writing hundreds of deployments) becomes one message, takes the changes and puts the
same encoded message on every subscriber's queue. A subscriber whose queue is full (a browser
that stopped reading) is told to reset instead of being sent more: it reads the snapshot again
when it catches up, and the publisher never blocks on it. Kinds the API server refuses to list
travel the same way (`errors`), as they change.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bundler.ui.fleet_model import FleetModel

COALESCE_SECONDS = 0.25
# How often the publisher looks at the watches' errors while the model is quiet.
IDLE_SECONDS = 2.0
# Messages queued for one page before it is told to reset instead.
QUEUE_SIZE = 64
# Pages subscribed at once (each holds one of the server's threads).
MAX_SUBSCRIBERS = 32

Errors = Callable[[], dict[str, str]]


def sse_message(event: str, data: Any) -> bytes:
    """One server-sent event; JSON has no raw newlines, so `data` is one line."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


# What a page that fell behind gets instead of what it missed: read the snapshot again.
RESET = sse_message("fleet", {"reset": True})


@dataclass
class Subscriber:
    messages: queue.Queue[bytes | None] = field(
        default_factory=lambda: queue.Queue(maxsize=QUEUE_SIZE)
    )


class EventHub:
    def __init__(self, model: FleetModel, errors: Errors) -> None:
        self._model = model
        self._errors = errors
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._last_errors: dict[str, str] = {}
        self._thread = threading.Thread(target=self._run, name="ui-events", daemon=True)
        model.on_change(self._wake.set)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """End the publisher and every subscription (each stream ends after its queue)."""
        self._stopped.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            subscribers, self._subscribers = self._subscribers, []
        for subscriber in subscribers:
            _put_end(subscriber)

    def subscribe(self) -> Subscriber | None:
        """A new subscription, or None when MAX_SUBSCRIBERS are open already."""
        with self._lock:
            if self._stopped.is_set() or len(self._subscribers) >= MAX_SUBSCRIBERS:
                return None
            subscriber = Subscriber()
            self._subscribers.append(subscriber)
            return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    def errors(self) -> dict[str, str]:
        return self._errors()

    def _run(self) -> None:
        while not self._stopped.is_set():
            woken = self._wake.wait(IDLE_SECONDS)
            if self._stopped.is_set():
                return
            if woken:
                self._stopped.wait(COALESCE_SECONDS)
                self._wake.clear()
            errors = self._errors()
            if errors != self._last_errors:
                self._last_errors = errors
                self._publish(sse_message("errors", errors))
            changes = self._model.take_changes()
            if changes is not None:
                self._publish(sse_message("fleet", changes))

    def _publish(self, message: bytes) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber.messages.put_nowait(message)
            except queue.Full:
                _replace_all(subscriber, RESET)


def _replace_all(subscriber: Subscriber, message: bytes | None) -> None:
    """Empty the queue and leave only `message` in it (only the publisher and stop() put)."""
    while True:
        try:
            subscriber.messages.get_nowait()
        except queue.Empty:
            break
    subscriber.messages.put_nowait(message)


def _put_end(subscriber: Subscriber) -> None:
    try:
        subscriber.messages.put_nowait(None)
    except queue.Full:
        _replace_all(subscriber, None)
