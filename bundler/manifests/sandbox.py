"""A child process that renders charts with helm-python-sdk within a deadline and a memory limit.

helm-python-sdk renders in the calling process and cannot be cancelled, and a chart's templates
are its author's (`{{ range until 100000000 }}` loops for minutes, doubling a string exhausts
memory). So the SDK runs in a child (bundler.manifests.sandbox_child) whose data memory is
limited (`--render-memory`) and which is killed when a render outlives `--render-timeout`.

The limit is RLIMIT_DATA, what the process can write to (heaps, Go's arenas once used, thread
stacks), not RLIMIT_AS: Go's runtime reserves address space up to whatever RLIMIT_AS allows as it
starts, leaving too little for the threads it starts next, so a child under RLIMIT_AS fails at
random; its data stays near 150 MiB until a template allocates.

One child serves every render of a command (starting one costs the interpreter and Helm's Go
runtime, some 80 ms); a child that is killed or dies is replaced at the next render. The two talk
over the child's stdin and stdout in frames (bundler.bounded.frames). A request is the release;
the answer its rendered text (cut just past the cap bundler.manifests.release checks, so a
frame's size is bounded), Helm's error or that the child ran out of memory. The child's stderr
goes to a file, so Go's crash dump on running out of memory never reaches the user and tells the
parent which bound was hit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import asdict, dataclass
from typing import IO, TYPE_CHECKING, Any

from bundler.bounded.child import child_environment, stop_child
from bundler.bounded.frames import ChildGoneError, FrameReader, TimedOutError, write_frame
from bundler.errors import BundlerError, TemplateError

if TYPE_CHECKING:  # engine imports this module
    from bundler.manifests.engine import ReleaseInput

CHILD_MODULE = "bundler.manifests.sandbox_child"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MIB = 2048
# The interpreter and Helm's Go runtime use some 150 MiB of data before any render.
MIN_MEMORY_MIB = 256
# Go's crash dump on running out of memory (or failing to reserve it) says so.
MEMORY_SIGNS = ("out of memory", "cannot allocate memory", "failed to reserve")
STDERR_TAIL_BYTES = 64 << 10


@dataclass(frozen=True)
class RenderLimits:
    """How long one render may take and how much data memory Helm's engine may use."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mib: int = DEFAULT_MEMORY_MIB


def timeout_message(limits: RenderLimits) -> str:
    return f"rendering took longer than the --render-timeout of {limits.timeout_s:g}s; stopped it"


def memory_message(limits: RenderLimits) -> str:
    limit = limits.memory_mib
    return f"rendering needed more than the --render-memory limit of {limit} MiB; stopped it"


class RenderWorker:
    """The child process of one command, started at its first render."""

    def __init__(self, limits: RenderLimits, max_text_chars: int) -> None:
        self.limits = limits
        self.max_text_chars = max_text_chars
        self.started = 0  # children started, for tests and benchmarks
        self._child: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []
        self._answers: FrameReader | None = None
        weakref.finalize(self, _stop_all, self._child)

    def render(self, release: ReleaseInput) -> str:
        """`release` rendered by the child: its text, cut after `max_text_chars` + 1 characters;
        TemplateError with Helm's message or naming the bound the render hit."""
        request = {**asdict(release), "chart": str(release.chart), "max_chars": self.max_text_chars}
        process = self._running()
        try:
            assert process.stdin is not None
            write_frame(process.stdin, json.dumps(request).encode("utf-8"))
            deadline = time.monotonic() + self.limits.timeout_s
            # JSON spells a character in at most 6 bytes (\u0000).
            answer = self._answer(deadline, 6 * (self.max_text_chars + 1) + 1024)
        except TimedOutError:
            self.stop()
            raise TemplateError(timeout_message(self.limits)) from None
        except (ChildGoneError, BrokenPipeError):
            raise TemplateError(self._death_message()) from None
        if answer.get("memory"):
            self.stop()  # Python's MemoryError in the child: it may not recover
            raise TemplateError(memory_message(self.limits))
        if "error" in answer:
            raise TemplateError(str(answer["error"]))
        return str(answer.get("text", ""))

    def stop(self) -> None:
        """Kill the child, if one runs; the next render starts another."""
        _stop_all(self._child)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child and self._child[0][0].poll() is None:
            return self._child[0][0]
        self.stop()
        # Kept open as long as the child lives, closed by _stop_all.
        stderr = tempfile.TemporaryFile(prefix="bundler-render-")  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, "-m", CHILD_MODULE, str(self.limits.memory_mib)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=child_environment(),
        )
        self._child.append((process, stderr))
        assert process.stdout is not None
        self._answers = FrameReader(process.stdout.fileno())
        self.started += 1
        try:
            ready = self._answer(time.monotonic() + self.limits.timeout_s, 64)
            if ready != {"ready": True}:
                raise ChildGoneError
        except (TimedOutError, ChildGoneError):
            said = _first_line(self._stderr_tail())
            self.stop()
            raise BundlerError(
                f"Helm's engine did not start within the --render-timeout of "
                f"{self.limits.timeout_s:g}s and the --render-memory limit of "
                f"{self.limits.memory_mib} MiB" + (f": {said}" if said else "")
            ) from None
        return process

    def _answer(self, deadline: float, limit: int) -> dict[str, Any]:
        """The child's next frame, a JSON object of at most `limit` bytes; anything else is
        not the child speaking (ChildGoneError)."""
        assert self._answers is not None
        return self._answers.read_object(deadline, limit)

    def _death_message(self) -> str:
        """Why the child died: its memory limit when its crash dump says so."""
        tail = self._stderr_tail()
        self.stop()
        if any(sign in tail.lower() for sign in MEMORY_SIGNS):
            return memory_message(self.limits)
        said = _first_line(tail)
        return "Helm's engine stopped without an answer" + (f": {said}" if said else "")

    def _stderr_tail(self) -> str:
        if not self._child:
            return ""
        stderr = self._child[0][1]
        stderr.seek(0, os.SEEK_END)
        stderr.seek(max(0, stderr.tell() - STDERR_TAIL_BYTES))
        return stderr.read().decode("utf-8", "replace")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _stop_all(children: list[tuple[subprocess.Popen[bytes], IO[bytes]]]) -> None:
    while children:
        process, stderr = children.pop()
        stop_child(process)
        stderr.close()
