"""The operations flags of `bundler manager` and `bundler agent`, the probes over HTTP, and the
acceptance run: a leader-elected manager against the test API server serves /metrics and the probes,
logs JSON lines that name their object and no secret, and on SIGTERM releases its Lease and exits 0.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import BUNDLE, CLUSTER, LEASE, NAMESPACE, SECRET
from bundler.apiserver import ApiServer
from bundler.commands import manager as manager_command
from bundler.commands.operations import Operations
from bundler.errors import InvalidInputError
from bundler.kube.ratelimit import DEFAULT_BURST, DEFAULT_QPS
from bundler.observe.endpoints import Address
from bundler.observe.logs import LogFormat
from bundler.runtime.clock import ManualClock
from bundler.runtime.host import Host
from bundler.runtime.key import Key
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import parse_args, run_command
from tests.support.manager.registry_charts import basic_auth_secret
from tests.support.observe.probe_client import get

REPO_ROOT = Path(__file__).resolve().parents[2]
# Upper bound (real seconds) on waits for the process; tests never assert on durations.
WAIT = 20.0
LOOPBACK = Address("127.0.0.1", 0)
PASSWORD = "s3cr3t-never-logged"
AGENT_ARGS = ("agent", "--management-kubeconfig", "k", "--cluster", "ws/c")


@pytest.mark.parametrize("command", [("manager",), AGENT_ARGS], ids=["manager", "agent"])
def test_operations_defaults(command: tuple[str, ...]) -> None:
    args = parse_args(*command)
    assert (args.metrics_addr, args.health_addr) == (Address("", 8080), Address("", 9440))
    assert (args.log_format, args.kube_api_qps, args.kube_api_burst) == (
        LogFormat.TEXT,
        DEFAULT_QPS,
        DEFAULT_BURST,
    )
    assert args.shutdown_timeout == 25.0
    assert Operations.from_args(args).kube_options().page_size == 500


@pytest.mark.parametrize("command", [("manager",), AGENT_ARGS], ids=["manager", "agent"])
def test_list_page_size_reaches_the_api_client(command: tuple[str, ...]) -> None:
    args = parse_args(*command, "--kube-list-page-size", "50")
    assert Operations.from_args(args).kube_options().page_size == 50


def test_leader_election_flags_become_the_lease_timings() -> None:
    args = parse_args(
        "manager",
        "--leader-elect",
        "--leader-election-lease-duration",
        "30",
        "--leader-election-renew-deadline",
        "20",
        "--leader-election-retry-period",
        "5",
    )
    lease = manager_command.options_from(args).lease()
    assert lease is not None
    assert (lease.lease_duration, lease.renew_deadline, lease.retry_period) == (30, 20.0, 5.0)


@pytest.mark.parametrize(
    "argv",
    [
        ("--metrics-addr", "8080"),
        ("--health-addr", "[::1"),
        ("--log-format", "xml"),
        ("--kube-api-qps", "0"),
        ("--kube-api-burst", "1.5"),
        ("--kube-list-page-size", "0"),
        ("--shutdown-timeout", "-1"),
        ("--leader-election-lease-duration", "0"),
    ],
    ids=[
        "metrics-addr",
        "health-addr",
        "log-format",
        "qps",
        "burst",
        "page-size",
        "shutdown",
        "lease",
    ],
)
def test_bad_operations_flags_are_usage_errors(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args("manager", *argv)
    assert exited.value.code == 2
    assert argv[0] in capsys.readouterr().err


def test_lease_timings_must_nest() -> None:
    with pytest.raises(InvalidInputError, match="retry-period") as raised:
        run_command("manager", "--leader-election-renew-deadline", "20")
    assert raised.value.field == "--leader-election-renew-deadline"


# -- probes over HTTP ---------------------------------------------------------------------------


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def probed(clock: ManualClock) -> Iterator[tuple[Operations, Host, str]]:
    """A host on a ManualClock watched by Operations serving its probes on loopback."""
    ops = Operations(metrics_addr=None, health_addr=LOOPBACK)
    host = Host(MemoryStore(), clock=clock, workers=1, name="work", metrics=ops.runtime)
    ops.watch_host(host)
    with ops.serving() as (bound,):
        yield ops, host, f"http://127.0.0.1:{bound.port}"
    host.stop(WAIT)


def test_ready_once_started_and_alive_until_the_worker_wedges(
    probed: tuple[Operations, Host, str], clock: ManualClock
) -> None:
    ops, host, url = probed
    entered, unblock = threading.Event(), threading.Event()

    def reconcile(key: Key) -> None:
        entered.set()
        assert unblock.wait(WAIT)

    controller = host.add_controller("work", reconcile)
    assert get(f"{url}/readyz") == (500, "caches:work: host work is new\n")
    host.start()
    assert get(f"{url}/readyz") == (200, "ok\n")
    controller.enqueue(Key("ns", "stuck"))
    assert entered.wait(WAIT)
    controller.enqueue(Key("ns", "waiting"))
    clock.advance(ops.stall_after)
    status, body = get(f"{url}/healthz")
    assert (status, body.startswith("workers:work: host work: 1 keys waiting")) == (500, True)
    unblock.set()
    assert host.wait_idle(WAIT)
    assert get(f"{url}/healthz") == (200, "ok\n")


# -- the manager process ------------------------------------------------------------------------


class Process:
    """`bundler ARGV` in its own process, its stderr lines collected as they come."""

    def __init__(self, *argv: str) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "bundler", *argv],
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.popen.stderr is not None
        for line in self.popen.stderr:
            self.lines.put(line)

    def wait_for_line(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                assert self.popen.poll() is None, "".join(self.seen)
                continue
            self.seen.append(line)
            parsed: dict[str, Any] = json.loads(line)
            if wanted(parsed):
                return parsed
        raise AssertionError(f"no such line in: {''.join(self.seen)}")

    def stop(self) -> int:
        self.popen.send_signal(signal.SIGTERM)
        code = self.popen.wait(WAIT)
        self._reader.join(WAIT)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()


def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def holder(server: ApiServer) -> str | None:
    try:
        lease = server.store.get(LEASE, "bundler-manager", WS)
    except NotFound:
        return None
    return str(lease["spec"].get("holderIdentity"))


def served_port(process: Process) -> int:
    """The port of the one server the same metrics and health address make."""
    line = process.wait_for_line(lambda p: p["msg"].startswith("serving"))
    assert line["msg"].startswith("serving /healthz, /metrics, /readyz on 127.0.0.1:")
    return int(line["msg"].rsplit(":", 1)[1])


def test_a_leader_elected_manager_serves_metrics_and_probes_and_hands_over_on_sigterm(
    tmp_path: Path,
) -> None:
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        server.store.create(SECRET, basic_auth_secret("creds", "user", PASSWORD))
        server.store.create(CLUSTER, cluster("a").to_wire())
        server.store.create(BUNDLE, bundle([{"clusterSelector": {}}], helm=_CREDS).to_wire())
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        process = Process(
            "manager",
            *("--kubeconfig", str(kubeconfig), "--namespace", WS, "--leader-elect"),
            *("--log-format", "json", "--shutdown-timeout", "5"),
            *("--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0"),
            *("--leader-election-lease-duration", "60", "--leader-election-retry-period", "0.2"),
        )
        try:
            url = f"http://127.0.0.1:{served_port(process)}"
            eventually(lambda: get(f"{url}/readyz")[0] == 200, "ready")
            assert get(f"{url}/healthz") == (200, "ok\n")
            eventually(lambda: bool(holder(server)), "the manager to hold the Lease")
            desired = 'bundler_bundle_clusters_desired{bundle="app",namespace="fleet-default"} 1.0'
            eventually(
                lambda: desired in get(f"{url}/metrics")[1],
                "the bundle's desired clusters in /metrics",
            )
            scraped = get(f"{url}/metrics")[1]
            assert 'bundler_leader{queue="manager"} 1.0' in scraped
            assert 'bundler_kube_requests_total{code="200",verb="list"}' in scraped
            code = process.stop()
        finally:
            process.kill()
        log = "".join(process.seen)
        assert code == 0, log
        assert holder(server) == "", "the Lease is released, not left to expire"
    lines = [json.loads(line) for line in process.seen]
    assert all({"time", "level", "logger", "msg"} <= set(line) for line in lines)
    about_objects = [line for line in lines if "controller" in line]
    assert all({"kind", "namespace", "name"} <= set(line) for line in about_objects)
    assert PASSWORD not in log
    assert lines[-1]["msg"] == "bundler manager: stopped on SIGTERM"


_CREDS = {"secretRef": {"name": "creds"}}
