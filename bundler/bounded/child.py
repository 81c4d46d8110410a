"""Starting a child that finds bundler as its parent did and cannot outlive its parent; stopping it.

A parent that dies without stopping its children (SIGKILL, the OOM killer) must not leave them
running: a child asks the kernel to kill it when its parent goes (Linux's PR_SET_PDEATHSIG), and
where the kernel cannot, a thread exits it once its parent is gone. The kernel's signal is tied to
the *thread* that started the child, so a parent that uses it starts its children from a thread
that lives as long as they do (bundler.templating_pool does).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import bundler

ORPHAN_CHECK_S = 1.0
_PR_SET_PDEATHSIG = 1


def child_environment() -> dict[str, str]:
    """The parent's environment, with bundler importable however the parent found it."""
    source_root = str(Path(bundler.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": source_root + (os.pathsep + path if path else "")}


def stop_child(process: subprocess.Popen[bytes]) -> None:
    """In the parent: kill `process` (if it still runs), reap it and close its pipes."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):  # a dead child's stdin cannot be flushed
                stream.close()


def die_with_parent(parent: int) -> None:
    """In the child: be killed when `parent` ends (at once on Linux, else within a second)."""
    if not _parent_death_signal():
        exit_when_orphaned(parent)
    if os.getppid() != parent:  # the parent ended before the kernel was asked
        os._exit(1)


def exit_when_orphaned(parent: int) -> None:
    """In the child: a thread that exits the process once `parent` is no longer its parent.
    It needs the GIL: a child that calls long C code without releasing it waits for that."""
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_S)
    os._exit(1)


def _parent_death_signal() -> bool:
    """Ask Linux for SIGKILL when the parent thread ends; False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the interpreter's own symbols: libc's
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # no prctl: not Linux
        return False
