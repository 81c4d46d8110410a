"""Processes the harness starts: one per component, its output in a log file, always stopped.

A `Process` keeps everything the program writes (stdout and stderr) in `<log_dir>/<name>.log`, so a
failing test can print what each component said while it ran (`Supervisor.logs_since`). `Supervisor`
stops what it started in reverse order, SIGTERM first, then SIGKILL for what does not stop in time,
each in its own process group so nothing a component started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

STOP_GRACE_S = 10.0
POLL_S = 0.1
# What a failure report shows of one component's log: its last lines.
REPORTED_LOG_BYTES = 12_000


class ComponentDiedError(AssertionError):
    """A component exited while the harness still needed it."""


@dataclass
class Process:
    name: str
    argv: Sequence[str]
    log_path: Path
    env: Mapping[str, str] | None = None
    cwd: Path | None = None
    popen: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def start(self) -> Process:
        environment = dict(os.environ)
        environment.update(self.env or {})
        with self.log_path.open("ab") as log:
            self.popen = subprocess.Popen(
                list(self.argv),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=environment,
                cwd=self.cwd,
                start_new_session=True,
            )
        return self

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def check(self) -> None:
        """ComponentDiedError, with the end of its log, unless the process is still running."""
        if self.popen is not None and self.popen.poll() is not None:
            raise ComponentDiedError(
                f"{self.name} exited with {self.popen.returncode}:\n{self.log_tail()}"
            )

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_text(self, since: int = 0) -> str:
        if not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as log:
            log.seek(since)
            return log.read().decode("utf-8", "replace")

    def log_tail(self, since: int = 0) -> str:
        """What the process logged since byte `since`, at most its last REPORTED_LOG_BYTES."""
        start = max(since, self.log_size() - REPORTED_LOG_BYTES)
        return ("...\n" if start > since else "") + self.log_text(start)

    def stop(self, grace: float = STOP_GRACE_S) -> int | None:
        """Stop the process and its group; its exit code (None if it was never started)."""
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            _signal_group(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                _signal_group(self.popen.pid, signal.SIGKILL)
                self.popen.wait(grace)
        # A component's children (none expected) go with it.
        _signal_group(self.popen.pid, signal.SIGKILL)
        return self.popen.returncode


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


class Supervisor:
    """Starts processes into one log directory and stops them all, newest first."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        self.processes: list[Process] = []
        # Stopped ones, whose logs still tell what happened.
        self.finished: list[Process] = []

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Process:
        process = Process(name, argv, self.log_dir / f"{name}.log", env, cwd)
        self.processes.append(process.start())
        return process

    def check(self) -> None:
        for process in self.processes:
            process.check()

    def marks(self) -> dict[str, int]:
        """Where every log ends now: the start of what a test will make them say."""
        return {process.name: process.log_size() for process in self.processes}

    def logs_since(self, marks: Mapping[str, int]) -> str:
        """What each component logged since `marks` (the end of each log, for long ones)."""
        parts = []
        for process in [*self.finished, *self.processes]:
            text = process.log_tail(marks.get(process.name, 0))
            if text.strip():
                parts.append(f"===== {process.name} ({process.log_path}) =====\n{text}")
        return "\n".join(parts)

    def stop(self, process: Process) -> int | None:
        code = process.stop()
        if process in self.processes:
            self.processes.remove(process)
            self.finished.append(process)
        return code

    def stop_all(self) -> None:
        while self.processes:
            self.stop(self.processes[-1])


def wait_until(
    condition: Callable[[], object],
    what: str,
    *,
    timeout: float,
    supervisor: Supervisor | None = None,
    interval: float = POLL_S,
    detail: Callable[[], str] | None = None,
) -> object:
    """Poll `condition` until it returns something truthy, which is returned.

    Fails with `what` (and what `detail` says then) when `timeout` passes, or at once when a
    supervised component died. An exception from `condition` counts as "not yet" until the
    deadline, then is reported.
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        if supervisor is not None:
            supervisor.check()
        try:
            result = condition()
        except Exception as err:  # a component not up yet answers with an error
            result, last_error = None, err
        if result:
            return result
        if time.monotonic() > deadline:
            seen = f"; {detail()}" if detail is not None else ""
            error = f" (last error: {last_error})" if last_error is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{seen}{error}")
        time.sleep(interval)
