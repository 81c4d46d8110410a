"""A streaming watch in its own thread: resumes from the last resourceVersion, reports what ends it.

The stream is the API server's newline-delimited JSON events. The thread remembers the
resourceVersion of every event it sees (bookmarks included) and, when the server ends a stream
(timeoutSeconds) or the connection drops, reconnects from there, so no event is lost or repeated.
A 410 (HTTP or an ERROR event) means that resourceVersion is no longer available: the watch hands
Gone to `on_error` and ends, and the caller relists. So does any other failure that retrying within
the policy did not heal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import urllib3

from bundler.kube.errors import error_for_status, is_retryable_status
from bundler.kube.retry import RetryPolicy
from bundler.kube.transport import Transport
from bundler.store.errors import Unavailable
from bundler.store.protocol import ErrorHandler, EventHandler, EventType, WatchEvent

log = logging.getLogger(__name__)

# Read timeouts exceed the server-side timeoutSeconds by this much, so a healthy stream always
# ends on the server's terms and only a stalled one ends on ours.
READ_GRACE_SECONDS = 15.0
_READ_SIZE = 64 * 1024


@dataclass(frozen=True)
class WatchRequest:
    """What to watch: the collection path, its label selector and how errors name it."""

    path: str
    selector: str | None
    target: str
    timeout_seconds: int


class _StreamBrokenError(Exception):
    """The stream broke in a way worth reconnecting after a backoff."""


class StreamWatch:
    """One watch over HTTP. `stop()` ends it promptly; no callback runs once `stop()` returns
    (unless `stop()` is called from inside a callback, which ends the watch after it returns)."""

    def __init__(
        self,
        transport: Transport,
        request: WatchRequest,
        resource_version: str,
        on_event: EventHandler,
        on_error: ErrorHandler | None,
    ) -> None:
        self._transport = transport
        self._request = request
        self._resource_version = resource_version
        self._on_event = on_event
        self._on_error = on_error
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._response: urllib3.BaseHTTPResponse | None = None
        self._thread = threading.Thread(target=self._run, name=f"watch {request.target}")
        self._thread.daemon = True

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            response = self._response
        if response is not None:
            _interrupt(response)
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def _run(self) -> None:
        policy = self._transport.policy
        failures = 0
        try:
            while not self._stopped.is_set():
                try:
                    heard = self._stream_once()
                    failures = 0
                    if not heard:
                        # A server that ends streams at once, silently, must not get a busy loop.
                        self._stopped.wait(policy.initial_delay)
                except _StreamBrokenError as failed:
                    failures += 1
                    self._back_off(policy, failures, failed)
        except Exception as exc:  # anything that ends the watch goes to on_error
            self._report(exc)

    def _back_off(self, policy: RetryPolicy, failures: int, failed: _StreamBrokenError) -> None:
        if failures >= policy.attempts:
            raise Unavailable(
                f"watch stream keeps failing: {failed}", obj=self._request.target
            ) from failed
        self._stopped.wait(policy.backoff(failures - 1))

    def _stream_once(self) -> bool:
        """One connection: deliver its events until the server ends it or it breaks.

        True when the stream carried anything (events or bookmarks)."""
        response = self._transport.open_stream(
            self._request.path,
            target=self._request.target,
            query=self._query(),
            read_timeout=self._request.timeout_seconds + READ_GRACE_SECONDS,
            pause=self._stopped.wait,
        )
        with self._lock:
            self._response = response
        heard = False
        try:
            if self._stopped.is_set():
                return heard
            for line in _lines(response):
                heard = True
                self._handle(_decode(line))
        except urllib3.exceptions.ReadTimeoutError:
            pass  # a stalled stream: reconnect from where we are
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if not self._stopped.is_set():
                raise _StreamBrokenError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            with self._lock:
                self._response = None
            response.close()
        return heard

    def _query(self) -> list[tuple[str, str]]:
        query = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", self._resource_version),
            ("timeoutSeconds", str(self._request.timeout_seconds)),
        ]
        if self._request.selector:
            query.append(("labelSelector", self._request.selector))
        return query

    def _handle(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type"))
        obj = event.get("object") or {}
        if kind == "ERROR":
            code = int(obj.get("code") or 500)
            if is_retryable_status(code):
                raise _StreamBrokenError(f"server error event {code}: {obj.get('message', '')}")
            raise error_for_status(code, obj, self._request.target)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if rv:
            self._resource_version = str(rv)
        if kind not in EventType.__members__ or self._stopped.is_set():
            return
        try:
            self._on_event(WatchEvent(EventType(kind), obj))
        except Exception:
            # As in the in-memory store: a failing handler is logged and the watch goes on.
            log.exception("watch handler failed on %s %s", kind, self._request.target)

    def _report(self, exc: Exception) -> None:
        if self._stopped.is_set():
            return
        if self._on_error is None:
            log.warning("watch of %s ended: %s", self._request.target, exc)
            return
        try:
            self._on_error(exc)
        except Exception:
            log.exception("watch error handler failed for %s", self._request.target)


def _lines(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """Complete lines of the body as they arrive; returns when the server ends the stream."""
    pending = b""
    while chunk := response.read1(_READ_SIZE):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from (line for line in complete if line.strip())
    if pending.strip():
        yield pending


def _decode(line: bytes) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except ValueError as exc:
        raise _StreamBrokenError(f"undecodable watch event: {exc}") from exc
    if not isinstance(event, dict):
        raise _StreamBrokenError("watch event is not a JSON object")
    return event


def _interrupt(response: urllib3.BaseHTTPResponse) -> None:
    """Wake the thread blocked reading `response`: shutting the socket down ends its read."""
    # Failing means it is not connected any more, so the reader is not blocked on it.
    with contextlib.suppress(ValueError, RuntimeError, OSError):
        response.shutdown()
