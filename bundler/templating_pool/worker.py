"""A template worker: renders the values it is sent, each render under the OS limits.

Run as ``python -m bundler.templating_pool.worker PARENT MEMORY_MIB CPU_SECONDS PROGRESS_FD`` by
bundler.templating_pool.process. It asks to be killed with its parent, forbids core dumps, keeps
its stdout for answers (fd 1 is pointed at stderr, so nothing else can corrupt the frames), says
it is ready, then answers one request at a time until its stdin closes (bundler.templating_pool
.wire says what they hold), or until what it holds has grown by the memory limit (it then exits
between requests, and the parent starts another). It imports Jinja and bundler's templating
only: it starts in about a tenth of a second.

Before each render it sets its limits afresh: RLIMIT_DATA to what it holds now plus MEMORY_MIB,
RLIMIT_CPU to the CPU time it used so far plus CPU_SECONDS. Past the first, Python raises
MemoryError: the worker answers that and exits (a process that ran out of memory is not trusted
to go on). Past the second, the kernel kills it with SIGXCPU, which the parent reads as the CPU
limit. Before each templated string it writes the render's index and the string's path in the
values into the shared page PROGRESS_FD, so whatever stops it, the parent can tell where.
"""

from __future__ import annotations

import gc
import json
import math
import mmap
import os
import resource
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any

from bundler.bounded.child import die_with_parent
from bundler.bounded.frames import read_frame, write_frame
from bundler.core.templating.render import render_fields, values_reads
from bundler.core.templating.static_parts import StaticParts
from bundler.core.templating.templater import RenderAnswer
from bundler.errors import TemplateError
from bundler.runtime.collector import tune_collector
from bundler.templating_pool import wire
from bundler.templating_pool.limits import MEMORY_EXIT, RETIRED_EXIT
from bundler.templating_pool.progress import Progress

_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Bounds:
    """The worker's resource limits, set afresh before each render."""

    def __init__(self, memory_mib: int, cpu_seconds: int) -> None:
        self._memory = memory_mib << 20
        self._cpu_seconds = cpu_seconds
        self._statm = os.open(_STATM, os.O_RDONLY) if os.path.exists(_STATM) else None

    def arm(self) -> None:
        """What the next render may use: MEMORY_MIB more data, CPU_SECONDS more CPU time."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = math.ceil(usage.ru_utime + usage.ru_stime) + self._cpu_seconds
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, resource.RLIM_INFINITY))
        if self._statm is not None:
            limit = self.data() + self._memory
            resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.RLIM_INFINITY))

    def disarm(self) -> None:
        """Between renders, nothing is limited but what the parent's deadline allows."""
        resource.setrlimit(resource.RLIMIT_DATA, (resource.RLIM_INFINITY,) * 2)

    def grown(self, start: int) -> bool:
        """Whether the data held grew by the memory limit since `start` (see `data`)."""
        return self.data() - start > self._memory

    def data(self) -> int:
        """Bytes of the data segment: heaps, arenas, private mappings (0 where unknown)."""
        if self._statm is None:
            return 0
        # the sixth number, in pages
        return int(os.pread(self._statm, 256, 0).split()[5]) * _PAGE


def main(argv: list[str]) -> int:
    parent, memory_mib, cpu_seconds, progress_fd = (int(arg) for arg in argv)
    die_with_parent(parent)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU would dump core where it runs
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    progress = Progress(mmap.mmap(progress_fd, Progress.SIZE))
    bounds = Bounds(memory_mib, cpu_seconds)
    # what the worker imported lives as long as it does: out of the collector's way, which runs
    # as seldom as the manager's (a render's garbage is freed by reference counting)
    gc.freeze()
    tune_collector()
    start = bounds.data()
    write_frame(answers, wire.dumps({"ready": True}))
    while (frame := read_frame(sys.stdin.buffer)) is not None:
        request = json.loads(frame)
        if request["kind"] == "reads":
            progress.start(0)
            bounds.arm()
            try:
                reads = wire.reads_answer(values_reads(request["values"], request["bundle"]))
            except MemoryError:
                return _ran_out(answers, progress)
            bounds.disarm()
            write_frame(answers, wire.dumps(reads))
            continue
        trees = request["trees"]
        renders = request["renders"]
        # a tree several renders share is measured once, within the bounds of its first render
        uses = Counter(render["tree"] for render in renders)
        statics: dict[int, StaticParts] = {}
        for index, render in enumerate(renders):
            progress.start(index)
            bounds.arm()
            try:
                number = render["tree"]
                if uses[number] > 1 and number not in statics:
                    statics[number] = StaticParts(trees[number])
                answer = wire.answer_of(
                    _render(trees[number], render["context"], progress, statics.get(number))
                )
                frame = wire.dumps(answer)
            except MemoryError:
                return _ran_out(answers, progress)
            bounds.disarm()
            write_frame(answers, frame)
        if bounds.grown(start):
            return RETIRED_EXIT
    return 0


def _render(
    values: Mapping[str, Any],
    context: Mapping[str, Any],
    progress: Progress,
    statics: StaticParts | None,
) -> RenderAnswer:
    try:
        return render_fields(
            values, wire.context_from_wire(context), on_template=progress.field, statics=statics
        )
    except TemplateError as error:
        return error


def _ran_out(answers: Any, progress: Progress) -> int:
    """Say the render ran out of memory (if there is memory left to say it), and stop."""
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (resource.RLIM_INFINITY,) * 2)
        write_frame(answers, wire.dumps(wire.memory_answer(progress.current_field())))
    except (MemoryError, OSError):
        pass
    return MEMORY_EXIT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
