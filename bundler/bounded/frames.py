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


def read_exact(fd: int, size: int, deadline: float) -> bytes:
    """`size` bytes from the pipe `fd`, waiting no later than `deadline` (monotonic)."""
    data = bytearray()
    while len(data) < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimedOutError
        readable, _, _ = select.select([fd], [], [], remaining)
        if not readable:
            raise TimedOutError
        chunk = os.read(fd, min(size - len(data), 1 << 20))
        if not chunk:
            raise ChildGoneError
        data += chunk
    return bytes(data)


def read_object(fd: int, deadline: float, limit: int) -> dict[str, Any]:
    """The child's next frame on `fd`: a JSON object of at most `limit` bytes, checked."""
    size = int.from_bytes(read_exact(fd, FRAME_HEADER_BYTES, deadline), "big")
    if size > limit:
        raise ChildGoneError
    try:
        answer = json.loads(
            read_exact(fd, size, deadline),
            parse_int=_int64,
            parse_constant=_no_constant,
        )
    except ValueError:
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
