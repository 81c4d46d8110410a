"""State the test API server shares between its request threads: store, served kinds, counters,
injected faults, list snapshots being paged, who a token is (authn) and what they may do (rbac),
the emulated token controller, and the open watch streams it must end on stop."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from bundler.api.resources import Resource
from bundler.apiserver.authn import Authenticator
from bundler.apiserver.faults import FaultQueue
from bundler.apiserver.paging import Pager
from bundler.apiserver.rbac import Authorizer
from bundler.apiserver.tokens import TokenController
from bundler.store.memory import MemoryStore


class Closable(Protocol):
    def close(self) -> None: ...


class ServerContext:
    """Everything a request handler needs besides the request itself; thread-safe."""

    def __init__(
        self,
        store: MemoryStore,
        resources: Iterable[Resource],
        *,
        admin_token: str,
        bookmark_interval: float,
        token_controller: bool,
        continue_ttl: float,
    ) -> None:
        self.store = store
        self.authenticator = Authenticator(store, admin_token)
        self.authorizer = Authorizer(store)
        self.tokens = TokenController(store) if token_controller else None
        self.bookmark_interval = bookmark_interval
        self.faults = FaultQueue()
        self.pager = Pager(ttl=continue_ttl)
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._served: list[Resource] = list(dict.fromkeys(resources))
        self._counts: Counter[str] = Counter()
        self._denials: list[str] = []
        self._streams: set[Closable] = set()

    def served(self) -> list[Resource]:
        with self._lock:
            return list(self._served)

    def serve(self, res: Resource) -> None:
        with self._lock:
            if res not in self._served:
                self._served.append(res)

    def unserve(self, res: Resource) -> None:
        with self._lock:
            if res in self._served:
                self._served.remove(res)

    def count(self, verb: str) -> None:
        with self._lock:
            self._counts[verb] += 1

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()

    def deny(self, message: str) -> None:
        with self._lock:
            self._denials.append(message)

    def denials(self) -> list[str]:
        with self._lock:
            return list(self._denials)

    def open_stream(self, stream: Closable) -> bool:
        """Register a watch stream; False once the server is stopping (the stream must not run)."""
        with self._lock:
            if self.stopping.is_set():
                return False
            self._streams.add(stream)
            return True

    def close_stream(self, stream: Closable) -> None:
        with self._lock:
            self._streams.discard(stream)

    def stop_streams(self) -> None:
        """Mark the server stopping and end every open watch stream."""
        with self._lock:
            self.stopping.set()
            streams = list(self._streams)
        for stream in streams:
            stream.close()
