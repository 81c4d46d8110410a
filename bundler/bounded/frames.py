"""Frames between a parent and its child: an 8-byte big-endian length, then that many bytes of JSON.

The parent never trusts what a child sends: a frame is read within a deadline, refused when it
is longer than the parent allows, and must hold one JSON object whose numbers JSON and Go can
carry (integers within 64 bits, no NaN or infinity); anything else is not the child speaking
(:class:`ChildGoneError`), as when it closed its end.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import IO, Any, BinaryIO

FRAME_HEADER_BYTES = 8
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Digits of the longest integer within 64 bits, sign included.
_INT64_CHARS = 20
#: Bytes read from the pipe at once: whatever answers are waiting, in one system call.
_READ_BYTES = 1 << 20


class ChildGoneError(Exception):
    """The child closed its end (it died), or sent something that is not an answer."""


class TimedOutError(Exception):
    """The child did not answer before the deadline."""


def write_frame(out: IO[bytes], payload: bytes) -> None:
    out.write(len(payload).to_bytes(FRAME_HEADER_BYTES, "big"))
    out.write(payload)
    out.flush()


def read_frame(source: BinaryIO) -> bytes | None:
    """The next frame from `source` (blocking), None at its end: the child's side."""
    header = source.read(FRAME_HEADER_BYTES)
    if len(header) < FRAME_HEADER_BYTES:
        return None
    return source.read(int.from_bytes(header, "big"))


class FrameReader:
    """The parent's end of a child's pipe: whatever the child wrote is read at once, and frames
    are taken from what was read."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()

    def read_object(self, deadline: float, limit: int) -> dict[str, Any]:
        """The child's next frame: a JSON object of at most `limit` bytes, checked, read by
        `deadline` (monotonic). Raises TimedOutError, ChildGoneError."""
        size = int.from_bytes(self._take(FRAME_HEADER_BYTES, deadline), "big")
        if size > limit:
            raise ChildGoneError
        return checked_object(self._take(size, deadline))

    def _take(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimedOutError
            readable, _, _ = select.select([self._fd], [], [], remaining)
            if not readable:
                raise TimedOutError
            chunk = os.read(self._fd, max(_READ_BYTES, size - len(self._buffer)))
            if not chunk:
                raise ChildGoneError
            self._buffer += chunk
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken


def checked_object(data: bytes) -> dict[str, Any]:
    """`data` as one JSON object whose integers fit in 64 bits, without NaN or infinities."""
    # only a run of 19 digits can be an integer beyond 64 bits: other frames skip the check
    decoder = _CHECKING if _LONG_RUN in data.translate(_DIGITS) else _DECODER
    try:
        answer = decoder.decode(data.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError included
        raise ChildGoneError from None
    if not isinstance(answer, dict):
        raise ChildGoneError
    return answer


def _int64(text: str) -> int:
    # never convert an endless digit run: Python's conversion is quadratic
    if len(text) > _INT64_CHARS or not INT64_MIN <= (number := int(text)) <= INT64_MAX:
        raise ValueError("an integer beyond 64 bits")
    return number


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)
_CHECKING = json.JSONDecoder(parse_int=_int64, parse_constant=_no_constant)
#: Every digit as 9, anything else as a space; and the run that needs the check.
_DIGITS = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"9" * 19
