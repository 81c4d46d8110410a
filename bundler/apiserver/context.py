"""State the test API server shares between its request threads: store, served kinds, counters,
the log of successful writes (who wrote what: the last MAX_WRITES), injected faults, list
snapshots being paged, who a token is (authn) and what they may do (rbac), the schemas of the
custom resources (crd_schemas), the emulated token controller, and the open watch streams it must
end on stop. `start()` and `stop()` run what follows the store on its own: the token controller
and the CRD schemas."""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from bundler.api.resources import Resource, Verb
from bundler.apiserver.authn import Authenticator
from bundler.apiserver.crd_schemas import CustomResourceSchemas
from bundler.apiserver.faults import FaultQueue
from bundler.apiserver.paging import Pager
from bundler.apiserver.rbac import Authorizer
from bundler.apiserver.routing import ResourceRoute
from bundler.apiserver.tokens import TokenController
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

# Writes remembered for tests that ask who wrote what; older ones are forgotten.
MAX_WRITES = 100_000


@dataclass(frozen=True)
class Write:
    """One successful write: who, which verb, and the object (its status subresource or not)."""

    user: str
    verb: Verb
    resource: str
    namespace: str
    name: str
    status: bool

    @classmethod
    def of(cls, user: str, verb: Verb, route: ResourceRoute, answer: Obj) -> Write:
        name = route.name or str((answer.get("metadata") or {}).get("name") or "")
        namespace = route.namespace or ""
        return cls(user, verb, route.resource.plural, namespace, name, route.status)


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
        ca_pem: str,
        continue_ttl: float,
    ) -> None:
        self.store = store
        self.authenticator = Authenticator(store, admin_token)
        self.authorizer = Authorizer(store)
        self.schemas = CustomResourceSchemas(store)
        self.tokens = TokenController(store, ca_pem) if token_controller else None
        self.bookmark_interval = bookmark_interval
        self.faults = FaultQueue()
        self.pager = Pager(ttl=continue_ttl)
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._served: list[Resource] = list(dict.fromkeys(resources))
        self._counts: Counter[str] = Counter()
        self._denials: list[str] = []
        self._writes: deque[Write] = deque(maxlen=MAX_WRITES)
        self._streams: set[Closable] = set()

    def start(self) -> None:
        self.schemas.start()
        if self.tokens is not None:
            self.tokens.start()

    def stop(self) -> None:
        if self.tokens is not None:
            self.tokens.stop()
        self.schemas.stop()

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

    def record_write(self, write: Write) -> None:
        with self._lock:
            self._writes.append(write)

    def writes(self) -> list[Write]:
        with self._lock:
            return list(self._writes)

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
