"""`bundler sim` end to end: examples in, progress and a report out, the exit code."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.commands import sim
from bundler.errors import InvalidInputError
from tests.support.builders import WS, bundle, cluster
from tests.support.cli_helpers import run_command
from tests.support.sim.examples import EXAMPLES, FAST

# The examples made of bundler objects only (examples/capi holds Cluster API objects).
INPUTS = [arg for name in ("podinfo", "oci", "calico") for arg in ("-f", str(EXAMPLES / name))]
# examples/gates waits for an approval: given as `make demo` gives it.
APPROVE = ["--approve-after", "0.5"]


def run(argv: Sequence[str]) -> int:
    return run_command("sim", *argv)


def summary(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return parsed


def test_examples_converge_ready(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*INPUTS, *FAST, "--json"]) == sim.EXIT_CONVERGED
    report = summary(capsys)
    assert report["converged"] is True
    assert (report["clusters"], report["clustersReady"], report["succeeded"]) == (7, 7, True)
    ready = {b["bundle"]: (b["ready"], b["desired"], b["state"]) for b in report["bundles"]}
    assert ready == {
        "capi-fleet/calico": (2, 2, "Ready"),
        "fleet-default/podinfo": (5, 5, "Ready"),
        "fleet-default/podinfo-oci": (2, 2, "Ready"),
    }


def test_injected_failures_are_reported_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = run([*INPUTS, *FAST, "--fail-label", "region=eu-west", "--clusters", "6", "--seed", "1"])
    assert code == sim.EXIT_NOT_READY
    table = capsys.readouterr().out
    assert table.startswith("converged, NOT all ready in ")
    assert "fleet-default/podinfo      " in table
    assert "fleet-default/prod-eu-1  NotReady  InstallFailed: Helm install failed" in table
    assert "clusters labelled region=eu-west are set to fail" in table
    assert "/13 targeted clusters ready, 3 bundles" in table.splitlines()[0]
    assert table.splitlines()[2].split() == ["BUNDLE", "VERSION", "READY", "STATE", "COUNTS"]


@pytest.mark.parametrize("flag", [["-o", "yaml"], ["-o", "json"], ["--json"]], ids=str)
def test_sim_output_flag_prints_the_report_as_yaml_or_json(
    flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run([*INPUTS, *FAST, *flag]) == sim.EXIT_CONVERGED
    report = yaml.safe_load(capsys.readouterr().out)
    assert report["succeeded"] is True
    assert {b["version"] for b in report["bundles"]} == {"6.7.1", "v3.28.2"}


def test_a_fleet_that_does_not_settle_in_time_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run([*INPUTS, "--timeout", "0.01", "--json"]) == sim.EXIT_NOT_READY
    assert summary(capsys)["converged"] is False


def test_missing_input_is_invalid() -> None:
    with pytest.raises(InvalidInputError, match="no such file"):
        run(["-f", "/nonexistent/bundles.yaml"])


@pytest.mark.parametrize(
    "argv",
    [["--clusters", "-1"], ["--clusters", "many"], ["--workers", "x"]],
    ids=["negative-clusters", "clusters-not-a-number", "workers-not-a-number"],
)
def test_bad_numbers_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run([*INPUTS, *argv])
    assert exited.value.code == 2


def test_capi_examples_show_calico_pools_and_the_gated_cluster(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["-f", str(EXAMPLES), *FAST, *APPROVE, "--values", "capi-workloads/calico", "--json"]
    assert run(argv) == sim.EXIT_CONVERGED
    report = summary(capsys)
    pools = {
        cluster: [p["cidr"] for p in values["installation"]["calicoNetwork"]["ipPools"]]
        for cluster, values in report["values"]["capi-workloads/calico"].items()
    }
    assert pools == {
        "eu-west-1": ["192.168.0.0/16"],
        "us-east-1": ["10.244.0.0/16", "10.245.0.0/16"],
    }
    # examples/gates' edge-1 takes changes on Saturday nights only: listed when outside.
    listed = [(c["cluster"], c["reason"]) for c in report["nonReadyClusters"]]
    assert [c for c in listed if c[0] != "fleet-default/edge-1"] == [
        ("capi-workloads/ap-south-1", "ControlPlaneNotInitialized")
    ]


def test_values_table_and_unknown_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["-f", str(EXAMPLES), *FAST, *APPROVE, "--values", "capi-workloads/calico"]) == 0
    table = capsys.readouterr().out
    assert "VALUES OF capi-workloads/calico" in table and "- cidr: 10.245.0.0/16" in table
    assert "CLUSTERS NOT READY" in table
    with pytest.raises(InvalidInputError, match="--values"):
        run([*INPUTS, *FAST, "--values", "nope/nope"])


def test_a_bundle_deploys_with_the_credentials_secret_of_the_inputs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    credentials = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "registry-creds", "namespace": WS},
        "type": "kubernetes.io/basic-auth",
        "stringData": {"username": "u", "password": "p"},
    }
    private = bundle([{"clusterSelector": {}}], helm={"secretRef": {"name": "registry-creds"}})
    inputs = tmp_path / "private.yaml"
    inputs.write_text(yaml.safe_dump_all([cluster("a").to_wire(), private.to_wire(), credentials]))
    assert run(["-f", str(inputs), *FAST, "--json"]) == sim.EXIT_CONVERGED
    (report,) = summary(capsys)["bundles"]
    assert (report["bundle"], report["ready"], report["desired"], report["state"]) == (
        f"{WS}/app",
        1,
        1,
        "Ready",
    )


def test_a_deployment_waiting_for_depends_on_shows_the_agents_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    everywhere: list[dict[str, Any]] = [{"clusterSelector": {}}]
    failing = bundle(everywhere, name="certs", helm={"version": "9.9.9"})
    waiting = bundle(everywhere, name="web", dependsOn=[{"name": "certs"}])
    inputs = tmp_path / "deps.yaml"
    inputs.write_text(
        yaml.safe_dump_all([cluster("a").to_wire(), failing.to_wire(), waiting.to_wire()])
    )
    argv = ["-f", str(inputs), *FAST, "--fail-version", "9.9.9", "-o", "json"]
    assert run(argv) == sim.EXIT_NOT_READY
    report = {b["bundle"]: b for b in summary(capsys)["bundles"]}
    (listed,) = report[f"{WS}/web"]["nonReady"]
    assert listed["message"] == (
        "DependencyNotReady: waiting for bundle certs to be Ready on this cluster (dependsOn)"
    )


# (onFailure action, the Bundle's reason, the clusters' states at rest)
FAILED_UPGRADE_CASES = [
    ("halt-keeps-the-failed-clusters-on-the-bad-version", "Halt", "RolloutHalted", "NotReady"),
    ("rollback-returns-them-to-the-last-ready-version", "Rollback", "RolledBack", "OutOfSync"),
]


@pytest.mark.parametrize(
    ("action", "reason", "failed_state"),
    [c[1:] for c in FAILED_UPGRADE_CASES],
    ids=[c[0] for c in FAILED_UPGRADE_CASES],
)
def test_an_upgrade_to_a_failing_version_halts_after_max_failures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, action: str, reason: str, failed_state: str
) -> None:
    strategy = {
        "maxUnavailable": 2,
        "onFailure": {"maxFailures": 1, "progressDeadline": "1s", "action": action},
    }
    web = bundle([{"clusterSelector": {}}], name="web", rolloutStrategy=strategy)
    clusters = [cluster(f"edge-{i}").to_wire() for i in range(5)]
    inputs = tmp_path / "fleet.yaml"
    inputs.write_text(yaml.safe_dump_all([*clusters, web.to_wire()]))
    argv = ["-f", str(inputs), *FAST, "--fail-version", "9.9.9", "--upgrade-to", "9.9.9"]
    assert run([*argv, "-o", "json"]) == sim.EXIT_NOT_READY
    (report,) = summary(capsys)["bundles"]
    assert report["reason"] == reason
    assert report["message"].startswith("2 clusters failed the rollout, maxFailures is 1: ")
    states = sorted(entry["state"] for entry in report["nonReady"])
    assert states == sorted([failed_state] * 2 + ["OutOfSync"] * 3)
