"""The bounds of one render in a worker process, their defaults, and how a hit is told.

- ``--template-memory MIB`` (default :data:`DEFAULT_MEMORY_MIB`): what one render may allocate,
  on top of what the worker holds between renders (the interpreter, Jinja, compiled templates:
  some 20 MiB). The worker's data segment (RLIMIT_DATA) is set to both before each render.
- ``--template-timeout SECONDS`` (default :data:`DEFAULT_TIMEOUT_S`): how long one render may
  take, wall time, measured by the parent, which kills the worker at the deadline; the worker's
  CPU time (RLIMIT_CPU) is limited to the same, rounded up to whole seconds, so the kernel stops
  a render even when the parent cannot.

The step budget stops every render it can foresee well before either (the slowest it lets
through take well under a second and some tens of MiB: `make bench`), so these are a backstop:
they are what one cluster's render can cost at most. A pool runs :data:`DEFAULT_WORKERS`
workers, so templates cost a manager at most that many times the memory limit (plus each
worker's own ~20 MiB) beside its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_MEMORY_MIB = 256
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_WORKERS = 2
#: Below this a worker cannot render the smallest values (Python allocates in arenas of 1 MiB).
MIN_MEMORY_MIB = 8
#: A worker's exit status after answering that a render ran out of memory.
MEMORY_EXIT = 75
#: A worker's exit status when it retires between requests: what it holds grew past its start
#: by the memory limit (compiled templates, fragments of freed memory), so it starts afresh.
RETIRED_EXIT = 0


class Limit(StrEnum):
    """Which bound stopped a render."""

    MEMORY = "memory"
    CPU = "cpu"
    DEADLINE = "deadline"
    #: The worker ended without saying why, twice in a row on the same render.
    STOPPED = "stopped"


@dataclass(frozen=True)
class TemplateLimits:
    """The bounds of one render, and how many workers render."""

    memory_mib: int = DEFAULT_MEMORY_MIB
    timeout_s: float = DEFAULT_TIMEOUT_S
    workers: int = DEFAULT_WORKERS

    @property
    def cpu_seconds(self) -> int:
        """RLIMIT_CPU counts whole seconds."""
        return max(1, math.ceil(self.timeout_s))

    def message(self, limit: Limit, detail: str = "") -> str:
        """What a render stopped by `limit` is told."""
        if limit is Limit.MEMORY:
            return (
                f"rendering needed more than the --template-memory limit of {self.memory_mib} MiB;"
                " stopped it"
            )
        if limit is Limit.CPU:
            return (
                f"rendering used more than the --template-timeout of {self.timeout_s:g}s of CPU"
                " time; stopped it"
            )
        if limit is Limit.DEADLINE:
            return (
                f"rendering took longer than the --template-timeout of {self.timeout_s:g}s;"
                " stopped it"
            )
        return "the template worker stopped without an answer, twice" + (
            f" ({detail})" if detail else ""
        )
