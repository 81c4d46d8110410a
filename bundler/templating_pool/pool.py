"""The pool of template workers: started once per process, shared by every thread that plans.

:func:`shared_pool` gives the process's pool for a set of limits (one per distinct
:class:`~bundler.templating_pool.limits.TemplateLimits`, the manager's and each command's), so
many managers in one process (the simulator, tests) share its workers. Workers start at the first
render and stay: a worker is replaced only when it hit a limit, ended, or retired. The pool is a
:class:`~bundler.core.templating.templater.Templater`: planning hands it a Bundle's renders as one
batch, which it splits across its workers (a batch of at least :data:`SPLIT_AT` renders goes to
every worker it can get, so two workers use both cores), each part written to its worker as one
request and answered render by render.

Each render has its own deadline: the parent waits at most ``--template-timeout`` for each answer,
and kills the worker at the deadline. A render stopped by a limit, whichever, is that cluster's
:class:`~bundler.errors.TemplateLimitExceeded`, naming the path the worker was rendering; the rest
of the batch goes on in a fresh worker. A worker that ends without a reason (killed from outside)
is given the render again once, in a fresh worker, before its cluster is told. A worker that
cannot start at all is a TransientError: the whole pass is retried later. Nothing a worker does or
sends can raise anything else in the caller.

Workers are started from one thread the pool keeps for that (their parent-death signal follows
it), are killed at exit (``atexit``) and, should the process die without running it, by the
kernel.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from bundler.bounded.frames import ChildGoneError, TimedOutError
from bundler.core.templating.reads import ValuesReads
from bundler.core.templating.templater import RenderAnswer, RenderCall
from bundler.errors import TemplateLimitExceeded, TransientError
from bundler.templating_pool import wire
from bundler.templating_pool.limits import Limit, TemplateLimits
from bundler.templating_pool.process import WorkerProcess, WorkerStartError

#: A batch of this many renders or more is split across the workers.
SPLIT_AT = 16


class _Slot:
    """One worker's place in the pool: its process, once started."""

    def __init__(self) -> None:
        self.worker: WorkerProcess | None = None


@dataclass(frozen=True)
class _Stopped:
    """Why a worker stopped answering (`limit`; None: it retired), the render it was on
    (`index`; None: between renders) and the path it was rendering (`field`)."""

    limit: Limit | None
    index: int | None
    field: str | None
    detail: str


class TemplatePool:
    """Worker processes rendering values under `limits`; a Templater."""

    def __init__(self, limits: TemplateLimits | None = None) -> None:
        self.limits = limits or TemplateLimits()
        self._pid = os.getpid()
        self._slots: queue.LifoQueue[_Slot] = queue.LifoQueue()
        self._all = [_Slot() for _ in range(max(1, self.limits.workers))]
        for slot in self._all:
            self._slots.put(slot)
        self._starter = ThreadPoolExecutor(1, thread_name_prefix="bundler-template-starter")
        self._helpers = ThreadPoolExecutor(
            max(1, len(self._all) - 1), thread_name_prefix="bundler-template-batch"
        )
        self._lock = threading.Lock()
        self._closed = False
        #: Workers started, and renders stopped by each limit: for tests, benchmarks and logs.
        self.started = 0
        self.stopped: Counter[str] = Counter()
        self._ended_cpu = 0.0
        self._ended_peak_mib = 0.0

    # -- the Templater protocol -------------------------------------------------------------------

    def reads(self, bundle: str, values: Mapping[str, Any]) -> ValuesReads:
        """What the templates of `values` read; not told when the worker could not say."""
        slot = self._slots.get()
        try:
            for _ in range(2):  # a worker that retired or ended is replaced once
                worker = self._running(slot)
                try:
                    worker.send(wire.reads_request(bundle, values))
                    return wire.checked_reads(worker.answer(self._deadline()))
                except (TimedOutError, ChildGoneError, wire.BadAnswerError) as failure:
                    stopped = self._stop(slot, failure)
                    if stopped.limit is not None and stopped.limit is not Limit.STOPPED:
                        break
            return ValuesReads(True, None)  # each render reports why, with its path
        finally:
            self._slots.put(slot)

    def render(self, calls: Sequence[RenderCall]) -> list[RenderAnswer]:
        """An answer per call, in order; a batch of SPLIT_AT or more is split across workers."""
        if not calls:
            return []
        parts = self._split(calls)
        others: list[Future[list[RenderAnswer]]] = [
            self._helpers.submit(self._render_part, part) for part in parts[1:]
        ]
        answers = self._render_part(parts[0])
        for other in others:
            answers.extend(other.result())
        return answers

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start every worker now rather than at the first renders that need them."""
        slots = [self._slots.get() for _ in self._all]
        try:
            for slot in slots:
                self._running(slot)
        finally:
            for slot in slots:
                self._slots.put(slot)

    def close(self) -> None:
        """Stop every worker; the pool cannot be used after."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for slot in self._all:
            if slot.worker is not None and os.getpid() == self._pid:
                self._retire(slot)
        self._helpers.shutdown(wait=False)
        self._starter.shutdown(wait=False)

    def cpu_seconds(self) -> float:
        """CPU time the pool's workers used, those that ended included: for benchmarks."""
        live = [s.worker for s in self._all if s.worker is not None]
        return self._ended_cpu + sum(worker.cpu_seconds() for worker in live)

    def peak_rss_mib(self) -> float:
        """The most memory one of the pool's workers held at once, those that ended included."""
        live = [s.worker for s in self._all if s.worker is not None]
        return max([self._ended_peak_mib, *(worker.peak_rss_mib() for worker in live)])

    def worker_pids(self) -> list[int]:
        """The processes of the workers that run now."""
        return [s.worker.pid for s in self._all if s.worker is not None and s.worker.alive()]

    # -- inside -------------------------------------------------------------------------------

    def _split(self, calls: Sequence[RenderCall]) -> list[Sequence[RenderCall]]:
        if len(calls) < SPLIT_AT:
            return [calls]
        count = min(len(self._all), len(calls) // (SPLIT_AT // 2))
        size = -(-len(calls) // count)
        return [calls[start : start + size] for start in range(0, len(calls), size)]

    def _render_part(self, calls: Sequence[RenderCall]) -> list[RenderAnswer]:
        slot = self._slots.get()
        try:
            return self._render_in(slot, calls)
        finally:
            self._slots.put(slot)

    def _render_in(self, slot: _Slot, calls: Sequence[RenderCall]) -> list[RenderAnswer]:
        answers: list[RenderAnswer] = []
        given_again: set[int] = set()  # renders given to a fresh worker after an unexplained end
        while len(answers) < len(calls):
            pending = calls[len(answers) :]
            worker = self._running(slot)
            try:
                worker.send(wire.render_request(pending))
                for call in pending:
                    answers.append(self._answer(worker, call))
            except (TimedOutError, ChildGoneError, wire.BadAnswerError) as failure:
                stopped = self._stop(slot, failure)
                on = len(answers)
                if stopped.limit is None or (
                    stopped.limit is Limit.STOPPED and on not in given_again
                ):
                    given_again.add(on)
                    continue  # retired, or ended without a reason: the rest in a fresh worker
                answers.append(self._exceeded(stopped, calls[on]))
            except _RanOutOfMemoryError as memory:
                self._stop(slot, None)
                answers.append(self._exceeded(memory.stopped, memory.call))
        return answers

    def _answer(self, worker: WorkerProcess, call: RenderCall) -> RenderAnswer:
        raw = worker.answer(self._deadline())
        answer = wire.checked_render(raw, call)
        if isinstance(answer, str):  # the worker ran out of memory, and said so
            field = wire.checked_field(raw)
            raise _RanOutOfMemoryError(_Stopped(Limit.MEMORY, None, field, ""), call)
        return answer

    def _exceeded(self, stopped: _Stopped, call: RenderCall) -> TemplateLimitExceeded:
        limit = stopped.limit or Limit.STOPPED
        with self._lock:
            self.stopped[limit.value] += 1
        return TemplateLimitExceeded(
            self.limits.message(limit, stopped.detail),
            limit=limit.value,
            obj=call.context.describe(),
            field=stopped.field or "values",
        )

    def _stop(self, slot: _Slot, failure: Exception | None) -> _Stopped:
        """Stop the slot's worker after `failure` (None: it said it ran out of memory), and
        say why it stopped."""
        worker = slot.worker
        assert worker is not None
        index, field = worker.progress.where()
        if isinstance(failure, TimedOutError):
            limit: Limit | None = Limit.DEADLINE
        elif isinstance(failure, wire.BadAnswerError) or failure is None:
            limit = Limit.STOPPED if failure is not None else Limit.MEMORY
        else:
            limit = worker.ended()
        detail = worker.exit_detail() if limit is Limit.STOPPED else ""
        self._retire(slot)
        return _Stopped(limit, index, field, detail)

    def _retire(self, slot: _Slot) -> None:
        """Stop the slot's worker, keeping count of the CPU time it used."""
        worker = slot.worker
        assert worker is not None
        worker.stop()
        cpu, peak = worker.cpu_seconds(), worker.peak_rss_mib()
        slot.worker = None
        with self._lock:
            self._ended_cpu += cpu
            self._ended_peak_mib = max(self._ended_peak_mib, peak)

    def _running(self, slot: _Slot) -> WorkerProcess:
        if slot.worker is not None and slot.worker.alive():
            return slot.worker
        if slot.worker is not None:
            self._retire(slot)
        if self._closed:
            raise TransientError("the template workers are stopped: the process is ending")
        try:
            slot.worker = self._starter.submit(WorkerProcess, self.limits, os.getpid()).result()
        except WorkerStartError as failed:
            raise TransientError(f"a template worker did not start: {failed}") from None
        with self._lock:
            self.started += 1
        return slot.worker

    def _deadline(self) -> float:
        return time.monotonic() + self.limits.timeout_s


class _RanOutOfMemoryError(Exception):
    """A worker answered that the render ran out of memory (and exits)."""

    def __init__(self, stopped: _Stopped, call: RenderCall) -> None:
        super().__init__(stopped)
        self.stopped = stopped
        self.call = call


_POOLS: dict[tuple[int, TemplateLimits], TemplatePool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(limits: TemplateLimits | None = None) -> TemplatePool:
    """This process's pool for `limits`, made at the first call (workers start at the first
    render), stopped when the process exits."""
    key = (os.getpid(), limits or TemplateLimits())
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = TemplatePool(key[1])
        return pool


@atexit.register
def _close_all() -> None:
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()
