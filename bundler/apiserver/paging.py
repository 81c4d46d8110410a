"""List paging with `limit` and `continue`, consistent and as strict as the real API server's.

The first page takes a snapshot of the whole list; later pages are served from that snapshot, so
every page carries the first page's resourceVersion. A continue token names its snapshot and the
offset of the next item, so, as against kube-apiserver, a token may be sent again (a retried
request gets the same page). What kube-apiserver refuses, this refuses with the same code:
- a token that does not decode, or was issued for another collection or selector: 400;
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
_TOKEN_VERSION = "bundler.dev/paging/v1"
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
    """What a paged list was asked for: a continue token is valid only for the same query."""

    collection: str
    label_selector: str = ""
    field_selector: str = ""

    @property
    def selected(self) -> bool:
        return bool(self.label_selector or self.field_selector)


@dataclass
class _Snapshot:
    query: ListQuery
    items: list[Obj]
    resource_version: str
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
        self._snapshots: OrderedDict[int, _Snapshot] = OrderedDict()
        self._next_id = 0

    def first(self, query: ListQuery, items: list[Obj], resource_version: str, limit: int) -> Page:
        if limit <= 0 or len(items) <= limit:
            return Page(items, resource_version, None, None if query.selected else 0)
        with self._lock:
            self._next_id += 1
            snapshot_id = self._next_id
            self._snapshots[snapshot_id] = _Snapshot(query, items, resource_version, self._clock())
            while len(self._snapshots) > self._max:
                self._snapshots.popitem(last=False)
        return self._page(snapshot_id, self._snapshots[snapshot_id], 0, limit)

    def next(self, query: ListQuery, token: str, limit: int, resource_version: str) -> Page:
        if resource_version:
            raise HttpError(400, "specifying resource version is not allowed when using continue")
        snapshot_id, offset = _decode(token)
        with self._lock:
            snapshot = self._snapshots.get(snapshot_id)
            if snapshot is not None and self._clock() - snapshot.taken >= self._ttl:
                del self._snapshots[snapshot_id]
                snapshot = None
        if snapshot is None:
            raise HttpError(410, _EXPIRED, reason=StatusReason.EXPIRED)
        if snapshot.query != query or offset > len(snapshot.items):
            raise HttpError(400, "continue key is not valid: it was issued for another list")
        return self._page(snapshot_id, snapshot, offset, limit)

    def expire_all(self) -> None:
        """Forget every snapshot, as a compaction does: outstanding tokens answer 410."""
        with self._lock:
            self._snapshots.clear()

    def _page(self, snapshot_id: int, snapshot: _Snapshot, offset: int, limit: int) -> Page:
        end = len(snapshot.items) if limit <= 0 else offset + limit
        items = snapshot.items[offset:end]
        rest = len(snapshot.items) - min(end, len(snapshot.items))
        token = _encode(snapshot_id, end) if rest else None
        remaining = None if snapshot.query.selected else rest
        return Page(items, snapshot.resource_version, token, remaining)


def _encode(snapshot_id: int, offset: int) -> str:
    body = json.dumps({"v": _TOKEN_VERSION, "snapshot": snapshot_id, "start": offset})
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def _decode(token: str) -> tuple[int, int]:
    try:
        padded = token + "=" * (-len(token) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict) or body.get("v") != _TOKEN_VERSION:
        raise HttpError(400, "continue key is not valid: not a token this server issued")
    snapshot_id, offset = body.get("snapshot"), body.get("start")
    if not (isinstance(snapshot_id, int) and isinstance(offset, int) and offset >= 0):
        raise HttpError(400, "continue key is not valid: malformed")
    return snapshot_id, offset
