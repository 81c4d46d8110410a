"""Where a worker is: the render it is on and the values path it renders, in a page it shares
with its parent.

The worker writes before each render and each templated string (a few bytes into memory, no
system call); the parent reads only once the worker is stopped, to say where a limit was hit. The
page is a memfd the parent creates and the worker inherits. Layout: the render's index (4 bytes,
big-endian), the path's length (2 bytes), the path in UTF-8 (cut to fit).
"""

from __future__ import annotations

import mmap
import os

from bundler.core.templating.render import Path, field_of

_INDEX = slice(0, 4)
_LENGTH = slice(4, 6)
_TEXT = 6
_NONE = 0xFFFFFFFF
#: Paths spelled already: the same values tree is rendered for many clusters.
_SPELLED_MAX = 4096


class Progress:
    """The shared page, from either side."""

    SIZE = 4096
    _MAX_TEXT = SIZE - _TEXT

    def __init__(self, page: mmap.mmap) -> None:
        self._page = page
        self._spelled: dict[tuple[Path, str | None], bytes] = {}

    @classmethod
    def create(cls) -> tuple[Progress, int]:
        """A new page and its file descriptor, to hand to a worker."""
        fd = os.memfd_create("bundler-template-progress", 0)
        os.ftruncate(fd, cls.SIZE)
        return cls(mmap.mmap(fd, cls.SIZE)), fd

    def start(self, index: int) -> None:
        """The worker starts render `index`: no path yet."""
        self._page[_LENGTH] = b"\0\0"
        self._page[_INDEX] = index.to_bytes(4, "big")

    def field(self, path: Path, key: str | None) -> None:
        """The worker starts rendering the string at `path` (the map key `key`)."""
        text = self._spelled.get((path, key))
        if text is None:
            if len(self._spelled) >= _SPELLED_MAX:
                self._spelled.clear()
            text = field_of(path, key).encode("utf-8", "replace")[: self._MAX_TEXT]
            self._spelled[(path, key)] = text
        self._page[_TEXT : _TEXT + len(text)] = text
        self._page[_LENGTH] = len(text).to_bytes(2, "big")

    def current_field(self) -> str | None:
        length = int.from_bytes(self._page[_LENGTH], "big")
        if not length:
            return None
        return self._page[_TEXT : _TEXT + min(length, self._MAX_TEXT)].decode("utf-8", "replace")

    def where(self) -> tuple[int | None, str | None]:
        """(the render's index, the path) the worker last wrote."""
        index = int.from_bytes(self._page[_INDEX], "big")
        return (None if index == _NONE else index), self.current_field()

    def reset(self) -> None:
        self._page[_INDEX] = _NONE.to_bytes(4, "big")
        self._page[_LENGTH] = b"\0\0"

    def close(self) -> None:
        self._page.close()
