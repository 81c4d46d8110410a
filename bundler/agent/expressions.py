"""Health-check expressions evaluated in a child process the operating system bounds.

A check's CEL expressions are a Bundle author's text evaluated over an object of the cluster. The
object is bounded in size (bundler.core.health.OBJECT_BYTES_MAX); time and memory are bounded by
the kernel, not by counting steps in the agent: a trace function that stops Python at its next
call loses its hold as soon as an exception it raises is swallowed on the way out, and does not
see a long C call at all. So expressions are evaluated by one child per agent process
(bundler.agent.expressions_child), started at the first expression and reused, under a CPU-time
limit per evaluation (CPU_SECONDS, RLIMIT_CPU), a data-memory limit (MEMORY_MIB, RLIMIT_DATA) and
a wall deadline (WALL_SECONDS, for a child that stops answering). A child that hits one is
replaced at the next evaluation, and the check it was evaluating has failed, saying which bound.
Evaluations are taken one at a time: they take milliseconds, and a check is looked at again only
every few seconds.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from bundler.api.health import HealthCheck, HealthCheckResult, HealthState
from bundler.bounded.child import child_environment, stop_child
from bundler.bounded.frames import ChildGoneError, FrameReader, TimedOutError, write_frame
from bundler.core.health import oversized, result

CHILD_MODULE = "bundler.agent.expressions_child"
CPU_SECONDS = 1.0
MEMORY_MIB = 256  # within the agent chart's 512Mi limit, beside the agent itself
WALL_SECONDS = 15.0
# celpy, lark and pydantic are imported and the parser built before the child says it is ready.
START_SECONDS = 60.0
ANSWER_BYTES_MAX = 16 << 10


class ExpressionEvaluator:
    """One child process evaluating health-check expressions, started when first needed."""

    def __init__(
        self,
        cpu_seconds: float = CPU_SECONDS,
        memory_mib: int = MEMORY_MIB,
        wall_seconds: float = WALL_SECONDS,
    ) -> None:
        self.cpu_seconds = cpu_seconds
        self.memory_mib = memory_mib
        self.wall_seconds = wall_seconds
        self.started = 0  # children started, for tests
        self._lock = threading.Lock()
        self._child: list[subprocess.Popen[bytes]] = []
        self._answers: FrameReader | None = None
        weakref.finalize(self, _stop_all, self._child)

    def evaluate(self, check: HealthCheck, found: Mapping[str, Any]) -> HealthCheckResult:
        """What `found` says of `check` (one with expressions), judged in the child."""
        payload = json.dumps(found, separators=(",", ":"))
        refused = oversized(check, len(payload))
        if refused is not None:
            return refused
        check_json = check.model_dump_json(exclude_none=True)
        request = f'{{"check":{check_json},"object":{payload}}}'.encode()
        with self._lock:
            return self._ask(check, request)

    def stop(self) -> None:
        """Kill the child, if one runs; the next evaluation starts another."""
        _stop_all(self._child)

    def _ask(self, check: HealthCheck, request: bytes) -> HealthCheckResult:
        try:
            process = self._running()
        except (TimedOutError, ChildGoneError):
            self.stop()
            why = f"the evaluating process did not start within {START_SECONDS:g}s"
            return result(check, HealthState.FAILED, f"its expressions cannot be evaluated: {why}")
        try:
            assert process.stdin is not None
            write_frame(process.stdin, request)
            answer = self._read(time.monotonic() + self.wall_seconds)
        except TimedOutError:
            self.stop()
            return self._failed(check, f"took more than {self.wall_seconds:g}s")
        except (ChildGoneError, BrokenPipeError):
            return self._failed(check, self._death())
        if answer.get("memory"):
            self.stop()  # MemoryError: the child may not recover
            return self._failed(check, f"needed more than {self.memory_mib} MiB")
        try:
            return HealthCheckResult.model_validate(answer.get("result"))
        except ValidationError:
            self.stop()
            return self._failed(check, "gave no answer the agent understands")

    def _failed(self, check: HealthCheck, why: str) -> HealthCheckResult:
        return result(check, HealthState.FAILED, f"evaluating its expressions {why}: simplify them")

    def _death(self) -> str:
        """Which bound the child hit, from how it ended."""
        process = self._child[0] if self._child else None
        code = None
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = process.wait(timeout=1.0)
        self.stop()
        if code == -signal.SIGXCPU:
            return f"took more than {self.cpu_seconds:g}s of CPU time"
        return "stopped the evaluating process" + (f" (exit {code})" if code is not None else "")

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child and self._child[0].poll() is None:
            return self._child[0]
        self.stop()
        process = subprocess.Popen(
            [sys.executable, "-m", CHILD_MODULE, str(self.memory_mib), str(self.cpu_seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=child_environment(),
        )
        self._child.append(process)
        assert process.stdout is not None
        self._answers = FrameReader(process.stdout.fileno())
        self.started += 1
        if self._read(time.monotonic() + START_SECONDS) != {"ready": True}:
            raise ChildGoneError
        return process

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self._answers is not None
        return self._answers.read_object(deadline, ANSWER_BYTES_MAX)


_shared: list[ExpressionEvaluator] = []
_shared_lock = threading.Lock()


def shared_evaluator() -> ExpressionEvaluator:
    """The evaluator of this process, made at its first use."""
    with _shared_lock:
        if not _shared:
            _shared.append(ExpressionEvaluator())
        return _shared[0]


def _stop_all(children: list[subprocess.Popen[bytes]]) -> None:
    while children:
        stop_child(children.pop())
