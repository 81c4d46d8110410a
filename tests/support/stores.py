"""Store wrappers for tests: the unreachable link (every call fails while the link is down), built
on bundler.store.proxy's StoreProxy (re-exported here with its Verb); `exists`."""

from __future__ import annotations

from bundler.api.resources import Resource
from bundler.store.errors import NotFound, Unavailable
from bundler.store.protocol import Store
from bundler.store.proxy import StoreProxy, Verb

__all__ = ["StoreProxy", "Unreachable", "Verb", "exists"]


def exists(store: Store, res: Resource, name: str, namespace: str | None) -> bool:
    """Whether `store` holds that object."""
    try:
        store.get(res, name, namespace)
    except NotFound:
        return False
    return True


class Unreachable(StoreProxy):
    """A store seen over the network: while `down`, every call fails with Unavailable.

    Watches already running are not affected; end them on the inner store (e.g.
    MemoryStore.fail_watches) to cut them too.
    """

    def __init__(self, inner: Store, name: str = "management cluster") -> None:
        super().__init__(inner)
        self.name = name
        self.down = False
        self.calls_while_down = 0

    def before(self, verb: Verb, res: Resource) -> None:
        if self.down:
            self.calls_while_down += 1
            raise Unavailable("connection refused", obj=self.name)
