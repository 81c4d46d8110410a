"""`bundler manager`: its flags, its input errors, and a real run against the test API server that
stops cleanly on SIGTERM."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import CLUSTER, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.commands import manager as command
from bundler.errors import InvalidInputError
from bundler.manager.options import ManagerOptions
from tests.builders import WS, cluster
from tests.manager.conftest import WAIT

REPO_ROOT = Path(__file__).resolve().parents[2]

# Runs the real CLI with the manager command registered, whether or not COMMANDS lists it yet.
DRIVER = """
import sys
import bundler.commands as commands
from bundler.commands import manager
if manager not in commands.COMMANDS:
    commands.COMMANDS = (*commands.COMMANDS, manager)
from bundler.cli import main
sys.exit(main(sys.argv[1:]))
"""


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["manager", *argv])


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ((), {"namespaces": (), "workers": 4, "leader_elect": False, "lease_namespace": None}),
        (
            ("-n", "a", "--namespace", "b", "--workers", "8"),
            {"namespaces": ("a", "b"), "workers": 8},
        ),
        (
            ("--leader-elect", "--lease-namespace", "bundler-system"),
            {"leader_elect": True, "lease_namespace": "bundler-system"},
        ),
        (("--offline-after", "60"), {"offline_after": 60.0}),
    ],
    ids=["defaults", "workspaces-and-workers", "leader-election", "offline-after"],
)
def test_flags_become_options(argv: tuple[str, ...], expected: dict[str, Any]) -> None:
    options = command.options_from(parse(*argv))
    assert {name: getattr(options, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (("--workers", "0"), "--workers"),
        (("--namespace", "Not_A_Namespace"), "--namespace"),
        (("--offline-after", "0"), "--offline-after"),
        (("--kubeconfig", "/nonexistent/kubeconfig"), None),
    ],
    ids=["no-workers", "bad-namespace", "bad-offline-after", "missing-kubeconfig"],
)
def test_bad_input_is_an_input_error(argv: tuple[str, ...], flag: str | None) -> None:
    args = parse(*argv)
    with pytest.raises(InvalidInputError) as raised:
        args.run(args)
    if flag is not None:
        assert raised.value.field == flag


@pytest.mark.parametrize(
    ("namespaces", "lease_namespace", "expected"),
    [((), None, "default"), (("a", "b"), None, "a"), (("a",), "ops", "ops")],
    ids=["default", "first-workspace", "explicit"],
)
def test_lease_namespace(
    namespaces: tuple[str, ...], lease_namespace: str | None, expected: str
) -> None:
    options = ManagerOptions(
        namespaces=namespaces, leader_elect=True, lease_namespace=lease_namespace
    )
    lease = options.lease()
    assert lease is not None
    assert (lease.name, lease.namespace) == ("bundler-manager", expected)


def run_cli(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, *argv],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_missing_kubeconfig_exits_2() -> None:
    process = run_cli("manager", "--kubeconfig", "/nonexistent/kubeconfig")
    _, stderr = process.communicate(timeout=WAIT)
    assert process.returncode == 2
    assert stderr.startswith("error: ") and "/nonexistent/kubeconfig" in stderr


def test_runs_until_sigterm(tmp_path: Path) -> None:
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        server.store.create(CLUSTER, cluster("a").to_wire())
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        process = run_cli("manager", "--kubeconfig", str(kubeconfig), "--namespace", WS)
        try:
            deadline = time.monotonic() + WAIT
            while not server.store.get(CLUSTER, "a", WS).get("status", {}).get("namespace"):
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, "the manager never set status.namespace"
                time.sleep(0.05)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=WAIT)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        assert process.returncode == 0, stderr
        assert "stopped on SIGTERM" in stderr
