"""Reading `-f` inputs: standard input, documents of kinds bundler does not own, --strict."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from bundler.inputs import load_world
from tests.cli_helpers import run_cli

CLUSTER = """apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: a, namespace: ws}
"""
BUNDLE = """apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata: {name: app, namespace: ws}
spec:
  helm: {repo: https://charts.example.com, chart: app, version: 1.0.0}
  targets: [{clusterSelector: {}}]
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
"""
FLEET_YAML = """defaultNamespace: web
helm: {chart: ./chart}
"""
FOREIGN = "---\n".join([CLUSTER, DEPLOYMENT, BUNDLE, FLEET_YAML])


def test_dash_reads_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO((CLUSTER + "---\n" + BUNDLE).encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, err = run_cli(capsys, "render", "-f", "-")
    assert (code, err) == (0, "")
    (deployment,) = [d for d in yaml.safe_load_all(out) if d]
    assert deployment["metadata"]["labels"]["bundler.dev/cluster-name"] == "a"


def test_errors_on_standard_input_name_it_and_the_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(BUNDLE.replace("chart: app", "chrt: app").encode()))
    monkeypatch.setattr("sys.stdin", stdin)
    code, _, err = run_cli(capsys, "render", "-f", "-")
    assert code == 2
    assert err.startswith("error: <stdin>:5: spec.helm.chrt: unknown field")


def test_documents_of_other_kinds_are_skipped_with_one_notice_each(tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_text(FOREIGN)
    world = load_world([str(tmp_path / "in.yaml")])
    assert [b.metadata.name for b in world.bundles] == ["app"]
    where = tmp_path / "in.yaml"
    assert world.notices == [
        f"notice: {where}:5: skipped Deployment apps/v1 web: not a kind bundler reads",
        f"notice: {where}:16: skipped a document without kind (not a Kubernetes object): not a "
        "kind bundler reads",
    ]


def test_skipped_documents_are_told_on_stderr_and_strict_refuses_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "in.yaml").write_text(FOREIGN)
    code, out, err = run_cli(capsys, "render", "-f", str(tmp_path))
    assert code == 0 and "kind: BundleDeployment" in out
    assert err.count("notice: ") == 2
    code, out, err = run_cli(capsys, "render", "-f", str(tmp_path), "--strict")
    assert (code, out) == (2, "")
    assert "in.yaml:6: kind: Deployment apps/v1 web is not a kind bundler reads" in err
