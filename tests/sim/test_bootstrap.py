"""`bundler sim` with a BootstrapConfig (bundler.sim.bootstrap): the Cluster API examples get Flux
and the agent, end in pull mode with their bundles Ready, and the report shows the phases."""

from __future__ import annotations

import json

import pytest

from bundler.commands import sim
from tests.support.cli_helpers import run_command
from tests.support.sim.examples import EXAMPLES, FAST

INPUTS = ["-f", str(EXAMPLES / "capi"), "-f", str(EXAMPLES / "bootstrap"), *FAST]


def test_capi_clusters_are_bootstrapped_into_pull_mode_with_their_bundles_ready(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_command("sim", *INPUTS, "--json") == sim.EXIT_CONVERGED
    report = json.loads(capsys.readouterr().out)
    phases = {
        b["cluster"]: (b["mode"], b["flux"], b["agent"], b["bootstrapped"])
        for b in report["bootstrap"]
    }
    done = ("pull", "True/Installed", "True/Connected", "True/Bootstrapped")
    gated = ("False/ClusterGated",) * 3
    assert phases == {
        "capi-workloads/ap-south-1": ("remote", *gated),
        "capi-workloads/eu-west-1": done,
        "capi-workloads/us-east-1": done,
    }
    ready = {b["bundle"]: (b["ready"], b["desired"], b["state"]) for b in report["bundles"]}
    assert ready == {"capi-workloads/calico": (2, 2, "Ready")}


def test_the_table_lists_the_bootstrap_phases(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_command("sim", *INPUTS) == sim.EXIT_CONVERGED
    table = capsys.readouterr().out
    assert "BOOTSTRAP (CLUSTER  MODE  FLUX-INSTALLED  AGENT-CONNECTED  BOOTSTRAPPED)" in table
    assert (
        "    capi-workloads/eu-west-1  pull  True/Installed  True/Connected  True/Bootstrapped"
        in table
    )
