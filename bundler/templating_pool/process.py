"""One template worker as the parent sees it: started, asked, waited for, stopped, and why it ended.

A worker is started from the pool's own long-lived thread (the kernel's parent-death signal
follows the thread that started the child: bundler.bounded.child). Its stderr is the parent's,
so a crash is not hidden; its answers come on its stdout, each read within the render's deadline
and checked (bundler.bounded.frames). When a worker ends, its exit says why: SIGXCPU is the CPU
limit, MEMORY_EXIT its memory limit (it answered so first), RETIRED_EXIT a worker that retired
between requests; anything else is unexplained.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from typing import Any

from bundler.bounded.child import child_environment
from bundler.bounded.frames import ChildGoneError, FrameReader, TimedOutError, write_frame
from bundler.templating_pool.limits import MEMORY_EXIT, RETIRED_EXIT, Limit, TemplateLimits
from bundler.templating_pool.progress import Progress

WORKER_MODULE = "bundler.templating_pool.worker"
#: How long a worker may take to start (the interpreter and Jinja: a tenth of a second when the
#: machine is quiet).
START_TIMEOUT_S = 60.0
#: An answer is at most the render cap (1 MiB, a rough JSON size) written as JSON with every
#: character escaped, plus a message.
MAX_ANSWER_BYTES = 8 << 20
#: How long a worker that closed its stdout has to exit before it is killed.
_EXIT_WAIT_S = 5.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_UNKNOWN_EXIT = 255


class WorkerStartError(Exception):
    """A worker did not say it was ready."""


class WorkerProcess:
    """One running worker."""

    def __init__(self, limits: TemplateLimits, parent: int) -> None:
        self._usage: resource.struct_rusage | None = None
        self.progress, progress_fd = Progress.create()
        self.progress.reset()
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    WORKER_MODULE,
                    str(parent),
                    str(limits.memory_mib),
                    str(limits.cpu_seconds),
                    str(progress_fd),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                pass_fds=(progress_fd,),
                env=child_environment(),
            )
            assert self._process.stdout is not None
            self._answers = FrameReader(self._process.stdout.fileno())
        finally:
            os.close(progress_fd)
        try:
            ready = self.answer(time.monotonic() + START_TIMEOUT_S)
        except TimedOutError:
            self.stop()
            raise WorkerStartError(f"it did not start within {START_TIMEOUT_S:g}s") from None
        except ChildGoneError:
            self._reap(time.monotonic() + _EXIT_WAIT_S)
            detail = self.exit_detail()
            self.stop()
            raise WorkerStartError(detail) from None
        if ready != {"ready": True}:
            self.stop()
            raise WorkerStartError("it did not say it was ready")

    @property
    def pid(self) -> int:
        return self._process.pid

    def alive(self) -> bool:
        """Not known to have ended (an end not seen yet shows at the next request)."""
        return self._process.returncode is None

    def _reap(self, deadline: float | None) -> bool:
        """Wait for the worker's end until `deadline` (None: as long as it takes), keeping what
        it used (os.wait4, which Popen does not give); whether it ended."""
        if self._process.returncode is not None:
            return True
        while True:
            try:
                pid, status, usage = os.wait4(
                    self._process.pid, 0 if deadline is None else os.WNOHANG
                )
            except ChildProcessError:  # reaped already (not by this pool): how it ended is lost
                self._process.returncode = _UNKNOWN_EXIT
                return True
            if pid:
                self._process.returncode = os.waitstatus_to_exitcode(status)
                self._usage = usage
                return True
            if deadline is None or time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def send(self, request: bytes) -> None:
        """Raises ChildGoneError when the worker is gone."""
        assert self._process.stdin is not None
        self.progress.reset()
        try:
            write_frame(self._process.stdin, request)
        except (BrokenPipeError, ValueError):  # ValueError: the pipe was closed
            raise ChildGoneError from None

    def answer(self, deadline: float) -> dict[str, Any]:
        """The next answer, read by `deadline`: TimedOutError, ChildGoneError."""
        return self._answers.read_object(deadline, MAX_ANSWER_BYTES)

    def ended(self) -> Limit | None:
        """Why the worker ended, once it closed its end: None when it retired."""
        if not self._reap(time.monotonic() + _EXIT_WAIT_S):
            return Limit.STOPPED  # it closed its stdout and went on: not the worker speaking
        status = self._process.returncode
        if status == -signal.SIGXCPU:
            return Limit.CPU
        if status == MEMORY_EXIT:
            return Limit.MEMORY
        if status == RETIRED_EXIT:
            return None
        return Limit.STOPPED

    def exit_detail(self) -> str:
        status = self._process.returncode
        if status is None:
            return "still running"
        if status < 0:
            return f"killed by {signal.Signals(-status).name}"
        return f"exit status {status}"

    def cpu_seconds(self) -> float:
        """CPU time the worker used so far, or in all once it is reaped (0 where /proc does
        not tell)."""
        if self._usage is not None:
            return self._usage.ru_utime + self._usage.ru_stime
        try:
            with open(f"/proc/{self._process.pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime

    def peak_rss_mib(self) -> float:
        """The most memory the worker held at once (0 where /proc does not tell)."""
        if self._usage is not None:
            return self._usage.ru_maxrss / 1024  # KiB on Linux
        try:
            with open(f"/proc/{self._process.pid}/status", "rb") as status:
                for line in status:
                    if line.startswith(b"VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def stop(self) -> None:
        """Kill the worker (if it still runs), reap it and close its pipes."""
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            self._reap(None)
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # a dead worker's stdin cannot be flushed
                    stream.close()
        self.progress.close()
