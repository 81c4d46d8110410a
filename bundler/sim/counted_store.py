"""`CountedStore`: a Store that counts the calls made through it, by verb, resource and object, and
the objects its reads returned. Through bundler.kube.KubeStore each call is one HTTP request (a
list longer than a page is more), so the counts are the requests a client would send to an API
server; the agent bench and the tests that prove a path incremental read them."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from bundler.api.resources import Resource
from bundler.store.protocol import Obj, Store
from bundler.store.proxy import WRITE_VERBS, StoreProxy, Verb

# (verb, resource plural, namespace, name) of one call; a list or a watch names no object ("").
Call = tuple[str, str, str, str]


class CountedStore(StoreProxy):
    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self._lock = threading.Lock()
        self._calls: Counter[Call] = Counter()
        # (resource plural, namespace, name) -> times a get or a list returned it
        self._read: Counter[tuple[str, str, str]] = Counter()

    def called(self, verb: Verb, res: Resource, namespace: str | None, name: str) -> None:
        with self._lock:
            self._calls[(verb.value, res.plural, namespace or "", name)] += 1

    def read(self, res: Resource, objects: Sequence[Obj]) -> None:
        with self._lock:
            for obj in objects:
                meta = obj.get("metadata") or {}
                self._read[(res.plural, meta.get("namespace") or "", meta.get("name") or "")] += 1

    def calls(self, verbs: frozenset[Verb] | None = None) -> int:
        """Calls so far (only those of `verbs`, when given)."""
        with self._lock:
            return sum(n for call, n in self._calls.items() if verbs is None or call[0] in verbs)

    def writes(self) -> int:
        return self.calls(WRITE_VERBS)

    def written(self) -> Counter[Call]:
        """The write calls so far, by (verb, resource plural, namespace, name)."""
        with self._lock:
            return Counter({call: n for call, n in self._calls.items() if call[0] in WRITE_VERBS})

    def reads_of_objects(self) -> Counter[tuple[str, str, str]]:
        """How often each object (plural, namespace, name) came back from a get or a list."""
        with self._lock:
            return Counter(self._read)

    def reset(self) -> None:
        with self._lock:
            self._calls.clear()
            self._read.clear()
