"""`bundler rollout approve` over real HTTP against the test API server: the annotation it writes,
and every refusal a clear line with exit 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import BUNDLE
from bundler.apiserver import ApiServer
from bundler.core.approvals import APPROVE, approved
from tests.support.builders import WS, bundle
from tests.support.cli_helpers import CliResult, run_cli
from tests.support.management_server import management_fixture, server_fixture  # noqa: F401

PARTITIONS = [
    {"name": "canary", "clusterName": "c0"},
    {"name": "rest", "clusterSelector": {}},
]


def create(server: ApiServer, **strategy: Any) -> None:
    rollout = {"partitions": PARTITIONS, **strategy}
    server.store.create(
        BUNDLE, bundle([{"clusterSelector": {}}], rolloutStrategy=rollout).to_wire()
    )


def approve(capsys: pytest.CaptureFixture[str], management: Path, *args: str) -> CliResult:
    return run_cli(capsys, "rollout", "approve", *args, "--kubeconfig", str(management))


def annotation(server: ApiServer) -> str | None:
    annotations = server.store.get(BUNDLE, "app", WS)["metadata"].get("annotations") or {}
    found: str | None = annotations.get(APPROVE)
    return found


def test_approving_partitions_of_the_current_generation(
    server: ApiServer, management: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create(server, approval={"partitions": ["canary", "rest"]})
    result = approve(capsys, management, f"{WS}/app", "--partition", "canary")
    assert result.code == 0, result.stderr
    assert result.stdout == f"approved partition canary of Bundle {WS}/app at generation 1\n"
    result = approve(capsys, management, "app", "-n", WS, "--partition", "rest")
    assert result.code == 0, result.stderr
    value = annotation(server)
    assert value is not None
    assert approved({APPROVE: value}, 1).partitions == {"canary", "rest"}
    assert approve(capsys, management, "app", "--generation", "1").code == 0
    assert annotation(server) == "1"


# (id, the Bundle's strategy, arguments, what stderr says)
REFUSALS: list[tuple[str, dict[str, Any] | None, list[str], str]] = [
    ("no-bundle", None, ["gone"], f"Bundle {WS}/gone: not found"),
    ("no-approval", {}, ["app"], "has no spec.rolloutStrategy.approval"),
    ("partition-waits-for-none", {"approval": {"partitions": ["rest"]}},
     ["app", "--partition", "canary"],
     "--partition: partition 'canary' waits for no approval (partitions that do: rest)"),
    ("unknown-partition", {"approval": {}}, ["app", "--partition", "prod"],
     "partition 'prod' waits for no approval (partitions that do: canary, rest)"),
    ("another-generation", {"approval": {}}, ["app", "--generation", "3"],
     "is at generation 1, not 3: review it and approve again"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("strategy", "args", "message"), [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS]
)
def test_refusals_exit_1_saying_why(
    server: ApiServer,
    management: Path,
    capsys: pytest.CaptureFixture[str],
    strategy: dict[str, Any] | None,
    args: list[str],
    message: str,
) -> None:
    if strategy is not None:
        create(server, **strategy)
    result = approve(capsys, management, *args)
    assert result.code == 1
    assert result.stderr.startswith("error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    if strategy is not None:
        assert annotation(server) is None
