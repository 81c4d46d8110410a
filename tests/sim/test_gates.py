"""`bundler sim` shows each rollout gate: a bake, an approval (given by --approve-after, or
waited for), and a cluster outside its maintenance window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.commands import sim
from tests.support.builders import cluster
from tests.support.cli_helpers import run_command

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = ["--flux-delay", "0"]
# Open one minute a year (New Year's midnight, UTC): outside it whenever the test runs.
RARELY = {"windows": [{"cron": "0 0 1 1 *", "duration": "1m"}]}


@pytest.fixture
def inputs(tmp_path: Path) -> list[str]:
    """examples/podinfo's clusters, examples/gates' Bundle, and an edge cluster (almost) always
    outside its window."""
    edge = cluster("edge-1", {"env": "edge"}, schedule=RARELY).to_wire()
    path = tmp_path / "edge.yaml"
    path.write_text(yaml.safe_dump(edge))
    bundle = str(EXAMPLES / "gates" / "bundle.yaml")
    return ["-f", str(EXAMPLES / "podinfo"), "-f", bundle, "-f", str(path)]


def report(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return parsed


def test_each_gate_is_shown_and_windows_are_no_failure(
    inputs: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_command("sim", *inputs, *FAST, "--approve-after", "0.5", "--json") == 0
    found = report(capsys)
    gates = [(g["bundle"], g["gate"]) for g in found["gates"]]
    gated = "fleet-default/podinfo-gated"
    for expected in (
        "Baking(canary)",
        "Baking(staging)",
        "WaitingForApproval(prod)",
        "approved prod (--approve-after)",
        "OutsideWindow(fleet-default/edge-1)",
    ):
        assert (gated, expected) in gates, gates
    assert gates.index((gated, "Baking(canary)")) < gates.index((gated, "WaitingForApproval(prod)"))
    bundle = next(b for b in found["bundles"] if b["bundle"] == gated)
    assert (bundle["ready"], bundle["desired"], bundle["state"]) == (5, 6, "OutsideWindow")
    assert bundle["gate"] == "OutsideWindow(fleet-default/edge-1)"
    assert found["succeeded"] is True


def test_without_an_approval_the_rollout_waits_and_the_run_says_so(
    inputs: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_command("sim", *inputs, *FAST)
    assert code == sim.EXIT_NOT_READY
    table = capsys.readouterr().out
    assert "fleet-default/podinfo-gated  6.7.1    3/6    WaitingForApproval" in table
    assert "WaitingForApproval: partition 'prod' waits for approval of generation 1" in table
    assert "bundler rollout approve fleet-default/podinfo-gated --partition prod" in table
