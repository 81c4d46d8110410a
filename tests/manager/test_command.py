"""`bundler manager`: its flags, its input errors, and a real run against the test API server that
stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import CLUSTER, CORE_KINDS, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.commands import manager as command
from bundler.core.shards import Shard
from bundler.errors import InvalidInputError
from bundler.manager.options import ManagerOptions
from tests.support.builders import WS, cluster
from tests.support.cli_helpers import LOOPBACK_ENDPOINTS, parse_args, run_cli, run_command
from tests.support.dashboards import WAIT_SECONDS, get_json, post_action, wait_until
from tests.support.identities import manager_kubeconfig
from tests.support.manager.world import WAIT

REPO_ROOT = Path(__file__).resolve().parents[2]
# Free ports on loopback: tests never listen on every interface or on fixed ports.


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
        (("--shard-count", "1"), {"shard": None}),
        (("--shard-count", "3", "--shard-index", "2"), {"shard": Shard(2, 3)}),
    ],
    ids=[
        "defaults",
        "workspaces-and-workers",
        "leader-election",
        "offline-after",
        "one-shard-is-no-shard",
        "shard-2-of-3",
    ],
)
def test_flags_become_options(argv: tuple[str, ...], expected: dict[str, Any]) -> None:
    options = command.options_from(parse_args("manager", *argv))
    assert {name: getattr(options, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (("--workers", "0"), "--workers"),
        (("--namespace", "Not_A_Namespace"), "--namespace"),
        (("--offline-after", "0"), "--offline-after"),
        (("--kubeconfig", "/nonexistent/kubeconfig"), None),
        (("--shard-count", "3", "--shard-index", "3"), "--shard-index"),
        (("--shard-index", "-1"), "--shard-index"),
        (("--ui-addr", "0.0.0.0:8090"), "--ui-addr"),
        (("--ui-addr", "8090"), "--ui-addr"),
    ],
    ids=[
        "no-workers",
        "bad-namespace",
        "bad-offline-after",
        "missing-kubeconfig",
        "shard-index-beyond-count",
        "negative-shard-index",
        "dashboard-off-loopback",
        "dashboard-without-host",
    ],
)
def test_bad_input_is_an_input_error(argv: tuple[str, ...], flag: str | None) -> None:
    with pytest.raises(InvalidInputError) as raised:
        run_command("manager", *argv)
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


def test_each_shard_elects_through_its_own_lease() -> None:
    leases = [ManagerOptions(leader_elect=True, shard=Shard(i, 3)).lease() for i in range(3)]
    assert [lease.name if lease else None for lease in leases] == [
        f"bundler-manager-shard-{i}-of-3" for i in range(3)
    ]


def start_bundler(*argv: str) -> subprocess.Popen[str]:
    """`bundler ARGV` in a process of its own (signals reach it as they would a user's)."""
    return subprocess.Popen(
        [sys.executable, "-m", "bundler", *argv],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_missing_kubeconfig_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "manager", "--kubeconfig", "/nonexistent/kubeconfig")
    assert result.code == 2
    assert result.stderr.startswith("error: ") and "/nonexistent/kubeconfig" in result.stderr


def test_manager_without_kubeconfig_says_set_kubeconfig_or_pass_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    result = run_cli(capsys, "manager")
    assert result.code == 2
    assert "set $KUBECONFIG or pass --kubeconfig" in result.stderr


def test_a_server_without_bundlers_crds_is_named_in_the_users_terms(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with ApiServer(resources=CORE_KINDS) as server:
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        result = run_cli(capsys, "manager", "--kubeconfig", str(kubeconfig), "--capi-import=off")
    assert result.code == 1
    assert "the server does not serve Bundle (bundles.bundler.dev): install bundler's CRDs" in (
        result.stderr
    )


def test_runs_until_sigterm(tmp_path: Path) -> None:
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        server.store.create(CLUSTER, cluster("a").to_wire())
        kubeconfig = manager_kubeconfig(server, tmp_path)
        process = start_bundler(
            "manager", "--kubeconfig", str(kubeconfig), "--namespace", WS, *LOOPBACK_ENDPOINTS
        )
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


def test_serves_the_dashboard_read_only_with_its_own_credentials(tmp_path: Path) -> None:
    with ApiServer() as server:
        server.store.create(NAMESPACE, {"metadata": {"name": WS}})
        server.store.create(CLUSTER, cluster("a").to_wire())
        kubeconfig = manager_kubeconfig(server, tmp_path)
        process = start_bundler(
            "manager", "--kubeconfig", str(kubeconfig), "--namespace", WS,
            "--ui-addr", "127.0.0.1:0", *LOOPBACK_ENDPOINTS,
        )  # fmt: skip
        try:
            url = _dashboard_url(process)
            assert get_json(url, "/api/session")["readOnly"] is True
            wait_until(
                lambda: [c["name"] for c in get_json(url, "/api/fleet")["clusters"]] == ["a"],
                "cluster a on the dashboard",
            )
            refused = post_action(url, "pause", "Cluster", f"{WS}/a")
            assert refused.status == 403 and "read-only" in refused.json()["error"]
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=WAIT_SECONDS)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
        assert process.returncode == 0, stderr
        assert not server.store.get(CLUSTER, "a", WS)["spec"].get("paused")


def _dashboard_url(process: subprocess.Popen[str]) -> str:
    """The address the manager logs for its dashboard."""
    assert process.stderr is not None
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        assert line or process.poll() is None, "the manager ended before serving the dashboard"
        if "dashboard (read-only) at " in line:
            return line.rsplit(" ", 1)[1].strip()
    raise AssertionError("the manager never said where its dashboard is")
