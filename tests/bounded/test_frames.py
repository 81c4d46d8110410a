"""Frames from a child are read within a deadline and checked before the parent uses them."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import pytest

from bundler.bounded.frames import FRAME_HEADER_BYTES, ChildGoneError, FrameReader, TimedOutError


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):
            os.close(fd)


def send(fd: int, payload: bytes, size: int | None = None) -> None:
    os.write(fd, (len(payload) if size is None else size).to_bytes(FRAME_HEADER_BYTES, "big"))
    os.write(fd, payload)


NOT_ANSWERS = [
    ("not-json", b"{nope"),
    ("not-an-object", b"[1, 2]"),
    ("integer-beyond-64-bits", b'{"n": 9223372036854775808}'),
    ("negative-beyond-64-bits", b'{"n": -9223372036854775809}'),
    ("endless-digits", b'{"n": ' + b"9" * 5000 + b"}"),
    ("nan", b'{"n": NaN}'),
    ("infinity", b'{"n": -Infinity}'),
    ("over-the-limit", b'{"text": "' + b"x" * 2000 + b'"}'),
]


@pytest.mark.parametrize("payload", [c[1] for c in NOT_ANSWERS], ids=[c[0] for c in NOT_ANSWERS])
def test_what_is_not_an_answer_is_refused(pipe: tuple[int, int], payload: bytes) -> None:
    send(pipe[1], payload)
    with pytest.raises(ChildGoneError):
        FrameReader(pipe[0]).read_object(time.monotonic() + 5, limit=1024)


def test_an_answer_within_64_bits_is_read(pipe: tuple[int, int]) -> None:
    send(pipe[1], b'{"n": 9223372036854775807, "m": -9223372036854775808, "f": 1.5}')
    answer = FrameReader(pipe[0]).read_object(time.monotonic() + 5, limit=1024)
    assert answer == {"n": 2**63 - 1, "m": -(2**63), "f": 1.5}


def test_a_claimed_size_over_the_limit_is_refused_before_reading(pipe: tuple[int, int]) -> None:
    send(pipe[1], b"", size=1 << 40)
    with pytest.raises(ChildGoneError):
        FrameReader(pipe[0]).read_object(time.monotonic() + 5, limit=1024)


def test_a_silent_child_times_out(pipe: tuple[int, int]) -> None:
    os.write(pipe[1], (10).to_bytes(FRAME_HEADER_BYTES, "big") + b"{")
    with pytest.raises(TimedOutError):
        FrameReader(pipe[0]).read_object(time.monotonic() + 0.05, limit=1024)


def test_frames_read_at_once_are_taken_one_by_one(pipe: tuple[int, int]) -> None:
    for n in range(3):
        send(pipe[1], b'{"n": %d}' % n)
    reader = FrameReader(pipe[0])
    assert [reader.read_object(time.monotonic() + 5, limit=1024) for _ in range(3)] == [
        {"n": 0},
        {"n": 1},
        {"n": 2},
    ]


def test_a_closed_end_is_a_child_gone(pipe: tuple[int, int]) -> None:
    os.close(pipe[1])
    with pytest.raises(ChildGoneError):
        FrameReader(pipe[0]).read_object(time.monotonic() + 5, limit=1024)
