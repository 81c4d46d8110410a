"""Reading `-f` inputs: standard input, documents of kinds bundler does not own, --strict, the size
cap and hostile scalars (one line, exit 2)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from bundler import yamlload
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


#: (id, what follows a Cluster's metadata in the file, what the one line on stderr says)
HOSTILE = [
    ("over-4300-digits", f"spec: {{x: {'9' * 5000}}}\n", "does not fit in 64 bits"),
    ("lone-surrogate", 'spec: {x: "\\ud800"}\n', "malformed YAML (line 4)"),
    ("deep", "spec: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than 100"),
]


@pytest.mark.parametrize(("tail", "message"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_hostile_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tail: str, message: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(CLUSTER + tail, encoding="utf-8")
    result = run_cli(capsys, "render", "-f", str(path))
    assert result.code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert "internal error" not in result.stderr


def test_a_file_over_the_size_cap_is_refused_unread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "in.yaml"
    with path.open("wb") as stream:
        stream.truncate(yamlload.MAX_INPUT_BYTES + 1)  # sparse: nothing to write
    result = run_cli(capsys, "render", "-f", str(path))
    assert result.code == 2
    assert f"{path}: larger than 16 MiB, the limit for one input" in result.stderr


def test_standard_input_over_the_size_cap_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    big = io.BytesIO(b"#" * (yamlload.MAX_INPUT_BYTES + 1))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(big))
    result = run_cli(capsys, "render", "-f", "-")
    assert result.code == 2
    assert "larger than 16 MiB, the limit for one input" in result.stderr
