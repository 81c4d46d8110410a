"""The child of bundler.agent.expressions: evaluates health-check expressions it is sent.

Run as `python -m bundler.agent.expressions_child MEMORY_MIB CPU_SECONDS`. It limits its own data
memory (RLIMIT_DATA), keeps its stdout for answers (fd 1 is pointed at stderr so nothing else
corrupts the frames), says it is ready once celpy's parser is built, then answers one request at a
time until its stdin closes. Before each evaluation its CPU-time limit (RLIMIT_CPU, whole seconds)
is moved to CPU_SECONDS past what it has used so far: an expression that runs longer is ended by
the kernel's SIGXCPU, whatever Python or C code it is in. A thread exits the child once its parent
is gone.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
from typing import Any

from bundler.bounded.child import exit_when_orphaned
from bundler.bounded.frames import read_frame, write_frame


def main(argv: list[str]) -> int:
    memory = int(argv[0]) << 20
    cpu_seconds = float(argv[1])
    resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU would dump core where it runs
    exit_when_orphaned(os.getppid())
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from bundler.core.health import warm_up

    warm_up()
    write_frame(answers, json.dumps({"ready": True}).encode())
    while (frame := read_frame(sys.stdin.buffer)) is not None:
        _limit_cpu(cpu_seconds)
        write_frame(answers, json.dumps(_evaluated(frame)).encode())
    return 0


def _limit_cpu(seconds: float) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime + seconds)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _evaluated(frame: bytes) -> dict[str, Any]:
    """The answer to one request {"check", "object"}: {"result": ...} or {"memory": true}."""
    from bundler.api.health import HealthCheck
    from bundler.core.health import compile_and_evaluate

    request: dict[str, Any] = json.loads(frame)
    try:
        check = HealthCheck.model_validate(request["check"])
        return {"result": compile_and_evaluate(check, request["object"]).model_dump(mode="json")}
    except MemoryError:
        return {"memory": True}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
