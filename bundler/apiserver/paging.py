"""List paging with `limit` and `continue`, consistent like the real API server's.

The first page takes a snapshot of the whole list; later pages are served from that snapshot, so
every page carries the first page's resourceVersion. Snapshots are bounded: an evicted or unknown
continue token answers 410 Expired, as a real server does once its snapshot is compacted.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj


@dataclass(frozen=True)
class Page:
    items: list[Obj]
    resource_version: str
    continue_token: str | None
    remaining: int


class Pager:
    """Holds the unread rest of paged lists, at most `max_snapshots` of them."""

    def __init__(self, max_snapshots: int = 64) -> None:
        self._max = max_snapshots
        self._lock = threading.Lock()
        self._snapshots: OrderedDict[str, tuple[list[Obj], str]] = OrderedDict()

    def first(self, items: list[Obj], resource_version: str, limit: int) -> Page:
        return self._page(items, resource_version, limit)

    def next(self, token: str, limit: int) -> Page:
        with self._lock:
            snapshot = self._snapshots.pop(token, None)
        if snapshot is None:
            raise HttpError(
                410,
                "the provided continue parameter is too old or unknown: list again from the start",
            )
        items, resource_version = snapshot
        return self._page(items, resource_version, limit)

    def _page(self, items: list[Obj], resource_version: str, limit: int) -> Page:
        if limit <= 0 or len(items) <= limit:
            return Page(items, resource_version, None, 0)
        page, rest = items[:limit], items[limit:]
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._snapshots[token] = (rest, resource_version)
            while len(self._snapshots) > self._max:
                self._snapshots.popitem(last=False)
        return Page(page, resource_version, token, len(rest))
