"""List paging with `limit` and `continue`, consistent and as lenient as the real API server's.

A continue token is kube-apiserver's: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":KEY}`, the
resourceVersion of the first page and the key after which the next page starts, relative to the
collection listed (`/<name>\\x00` in a namespace, `/<namespace>/<name>\\x00` across namespaces).
As etcd reads every page at the first page's revision, the first page takes a snapshot of every
object of the kind; a token names that snapshot by kind and resourceVersion, so it may be sent
again (a retried request gets the same page) and, as there, with another namespace or selector:
it continues that list after the same key. What kube-apiserver refuses, this refuses with the
same code:
- a token that does not decode: 400 `invalid continue token: ...`;
- `resourceVersion` together with `continue`: 400;
- a token whose snapshot is gone (`ttl` old, evicted beyond `max_snapshots`, or dropped by
  `expire_all`, which is what etcd's compaction does to a real one): 410 Expired.
`remainingItemCount` is given only for lists without a label or field selector, as Kubernetes does.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj
from bundler.store.status_codes import StatusReason

# etcd is compacted every 5 minutes in a default kube-apiserver: a token lives at least as long.
DEFAULT_TTL = 300.0
_TOKEN_VERSION = "meta.k8s.io/v1"
_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter."
)


@dataclass(frozen=True)
class Page:
    items: list[Obj]
    resource_version: str
    continue_token: str | None
    # None: not told (a selected list, whose remaining count the server does not know).
    remaining: int | None


@dataclass(frozen=True)
class ListQuery:
    """What one list asks for: a kind (`kind`, the snapshot's key), a namespace (None: every
    one) and whether a selector filters it (then no remaining count is told)."""

    kind: str
    namespace: str | None = None
    selected: bool = False


Select = Callable[[Obj], bool]


@dataclass
class _Snapshot:
    items: list[Obj]
    taken: float


class Pager:
    """Holds the snapshots of paged lists: at most `max_snapshots`, each for `ttl` seconds."""

    def __init__(
        self,
        max_snapshots: int = 64,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max = max_snapshots
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._snapshots: OrderedDict[tuple[str, int], _Snapshot] = OrderedDict()

    def first(
        self,
        query: ListQuery,
        everything: list[Obj],
        resource_version: str,
        limit: int,
        select: Select,
    ) -> Page:
        """The first page of `query` from `everything` of its kind (every namespace), as of
        `resource_version`; `select` is the list's namespace and selectors."""
        items = [obj for obj in everything if select(obj)]
        if limit <= 0 or len(items) <= limit:
            return Page(items, resource_version, None, None if query.selected else 0)
        key = (query.kind, int(resource_version))
        with self._lock:
            self._snapshots[key] = _Snapshot(everything, self._clock())
            self._snapshots.move_to_end(key)
            while len(self._snapshots) > self._max:
                self._snapshots.popitem(last=False)
        return _page(query, items, resource_version, "", limit)

    def next(
        self, query: ListQuery, token: str, limit: int, resource_version: str, select: Select
    ) -> Page:
        if resource_version:
            raise HttpError(400, "specifying resource version is not allowed when using continue")
        rv, start = _decode(token)
        with self._lock:
            snapshot = self._snapshots.get((query.kind, rv))
            if snapshot is not None and self._clock() - snapshot.taken >= self._ttl:
                del self._snapshots[(query.kind, rv)]
                snapshot = None
        if snapshot is None:
            raise HttpError(410, _EXPIRED, reason=StatusReason.EXPIRED)
        items = [obj for obj in snapshot.items if select(obj)]
        return _page(query, items, str(rv), start, limit)

    def expire_all(self) -> None:
        """Forget every snapshot, as a compaction does: outstanding tokens answer 410."""
        with self._lock:
            self._snapshots.clear()


def _key(query: ListQuery, obj: Obj) -> str:
    """An object's key relative to the collection listed, as etcd3's continue keys are."""
    meta = obj["metadata"]
    if query.namespace is None and meta.get("namespace"):
        return f"/{meta['namespace']}/{meta['name']}"
    return f"/{meta['name']}"


def _page(
    query: ListQuery, items: list[Obj], resource_version: str, start: str, limit: int
) -> Page:
    # Pages follow etcd's key order, which across namespaces is not (namespace, name) order.
    ordered = sorted(items, key=lambda obj: _key(query, obj))
    after = [obj for obj in ordered if _key(query, obj) >= start] if start else ordered
    page = after if limit <= 0 else after[:limit]
    rest = len(after) - len(page)
    token = _encode(int(resource_version), _key(query, page[-1]) + "\x00") if rest else None
    return Page(page, resource_version, token, None if query.selected else rest)


def _encode(resource_version: int, start: str) -> str:
    body = json.dumps({"v": _TOKEN_VERSION, "rv": resource_version, "start": start})
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def _decode(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError) as error:
        raise HttpError(
            400, f"invalid continue token: continue key is not valid: {error}"
        ) from None
    if not isinstance(body, dict) or body.get("v") != _TOKEN_VERSION:
        raise HttpError(
            400,
            "invalid continue token: continue key is not valid: incorrect encoded start "
            f"resourceVersion (version {_TOKEN_VERSION} required)",
        )
    rv, start = body.get("rv"), body.get("start")
    if not isinstance(rv, int) or rv <= 0 or not isinstance(start, str) or not start:
        raise HttpError(400, "invalid continue token: continue key is not valid: malformed")
    return rv, start
