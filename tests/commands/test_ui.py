"""`bundler ui` as a command: it serves until SIGTERM, on loopback unless told twice."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.apiserver import ApiServer
from tests.support.cli_helpers import run_cli
from tests.support.dashboards import WAIT_SECONDS, get_json


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    with ApiServer() as server:
        yield server.kubeconfig(tmp_path / "kubeconfig")


def test_it_serves_the_dashboard_until_sigterm(kubeconfig: Path) -> None:
    command = [sys.executable, "-m", "bundler", "ui", "--kubeconfig", str(kubeconfig)]
    process = subprocess.Popen(
        [*command, "--addr", "127.0.0.1:0", "--context", "bundler-test"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("bundler ui at http://127.0.0.1:"), line
        url = line.split()[3]
        session = get_json(url, "/api/session")
        assert session["context"] == "context bundler-test"
        assert session["readOnly"] is False
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 0, stderr


@pytest.mark.parametrize(
    ("addr", "says"),
    [
        ("0.0.0.0:8090", "not a loopback address; pass --allow-non-loopback"),
        ("example.com:8090", "is not an IP address or localhost"),
        ("127.0.0.1", "is not HOST:PORT"),
    ],
    ids=["every-address-unasked", "a-dns-name", "no-port"],
)
def test_an_address_it_will_not_bind_exits_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str], kubeconfig: Path, addr: str, says: str
) -> None:
    result = run_cli(capsys, "ui", "--kubeconfig", str(kubeconfig), "--addr", addr)
    assert result.code == 2
    assert "--addr" in result.stderr and says in result.stderr, result.stderr
