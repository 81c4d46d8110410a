"""Waiting for SIGTERM or SIGINT so a process can shut down cleanly instead of dying mid-write.

Python runs signal handlers on the main thread between bytecodes, where setting an Event could
deadlock on the lock the main thread already holds inside `Event.wait`. Instead the interpreter's
wakeup fd writes each signal number to a socket pair, and the main thread blocks on reading it.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class SignalWaiter:
    def __init__(self, reader: socket.socket, signals: tuple[signal.Signals, ...]) -> None:
        self._reader = reader
        self._signals = signals

    def wait(self) -> signal.Signals:
        """Block until one of the signals arrives; others that Python handles are ignored here."""
        while True:
            data = self._reader.recv(1)
            if data and data[0] in self._signals:
                return signal.Signals(data[0])


def _record(signum: int, frame: FrameType | None) -> None:
    """The Python-level handler: the wakeup fd has already recorded the signal."""


@contextmanager
def shutdown_signals(
    signals: tuple[signal.Signals, ...] = SHUTDOWN_SIGNALS,
) -> Iterator[SignalWaiter]:
    """Within the block `signals` no longer kill the process; `wait()` returns the first one.

    Must run on the main thread. Previous handlers are restored on exit.
    """
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    previous = {sig: signal.signal(sig, _record) for sig in signals}
    try:
        yield SignalWaiter(reader, signals)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        reader.close()
        writer.close()
