"""Reading `-f` inputs: standard input, documents of kinds bundler does not own, --strict, the size
cap and hostile scalars (one line, exit 2)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from bundler import yamlload
from bundler.inputs import load_world
from tests.support.cli_helpers import run_cli

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


CHART_TEMPLATE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
GITREPO = "apiVersion: fleet.cattle.io/v1alpha1\nkind: GitRepo\nmetadata: {name: apps}\n"
RULES_LIST = "- apiGroups: ['']\n  resources: [secrets]\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# (id, files besides the Bundle and Cluster at fleet/app.yaml, notices' tails in order)
WALKS: list[tuple[str, dict[str, str], list[str]]] = [
    ("git-directory", {".git/config.yaml": "[broken"}, []),
    ("venv-directory", {".venv/lib/site/x.yaml": "{{ nope"}, []),
    ("venv-of-another-name", {"env/pyvenv.cfg": "home = /usr\n", "env/x.yaml": "[x"}, []),
    (
        "chart-directory",
        {"web/Chart.yaml": "name: web\n", "web/templates/cm.yaml": CHART_TEMPLATE},
        ["web: skipped a Helm chart directory (Chart.yaml): bundler deploys charts from a"],
    ),
    (
        "chart-in-a-chart-folder",
        {"charts/a/Chart.yaml": "name: a\n", "charts/b/Chart.yaml": "name: b\n"},
        ["charts/a: skipped a Helm chart directory", "charts/b: skipped a Helm chart directory"],
    ),
    ("list-document", {"rules.yaml": RULES_LIST}, ["rules.yaml:1: skipped a list: not a Kub"]),
    (
        "fleet-yaml",
        {"app/fleet.yaml": FLEET_YAML},
        [
            "app/fleet.yaml:1: skipped a document without kind (not a Kubernetes object): a Fleet "
            "bundle's options, not a Kubernetes object; `bundler import fleet DIR"
        ],
    ),
    (
        "fleet-gitrepo",
        {"gitrepo.yaml": GITREPO},
        [
            "gitrepo.yaml:1: skipped GitRepo fleet.cattle.io/v1alpha1 apps: a kind of Fleet's; "
            "`bundler import fleet DIR"
        ],
    ),
    (
        "values-file",
        {"values.yaml": "replicas: 3\n"},
        ["values.yaml:1: skipped a document without kind (not a Kubernetes object): not a kind"],
    ),
]


@pytest.mark.parametrize(("files", "tails"), [w[1:] for w in WALKS], ids=[w[0] for w in WALKS])
def test_a_directory_is_read_without_what_is_not_input(
    tmp_path: Path, files: dict[str, str], tails: list[str]
) -> None:
    root = _tree(tmp_path / "fleet", {"app.yaml": BUNDLE + "---\n" + CLUSTER, **files})
    world = load_world([str(root)])
    assert [b.metadata.name for b in world.bundles] == ["app"]
    assert len(world.notices) == len(tails)
    for notice, tail in zip(world.notices, tails, strict=True):
        assert notice.startswith(f"notice: {root}/{tail}"), notice


def test_dot_reads_the_current_directory_but_not_its_venv_or_git(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(
        tmp_path, {"app.yaml": BUNDLE + "---\n" + CLUSTER, ".venv/x.yaml": "[", ".git/y.yml": "["}
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "render", "-f", ".")
    assert (code, err) == (0, "")
    assert "kind: BundleDeployment" in out


@pytest.mark.parametrize(
    ("files", "fragments"),
    [
        (
            {"web/Chart.yaml": "name: web\n", "web/templates/cm.yaml": CHART_TEMPLATE},
            ["notice: ", "skipped a Helm chart directory", "read no YAML file; 1 chart directory"],
        ),
        (
            {"fleet.yaml": FLEET_YAML, "values.yaml": "a: 1\n"},
            ["bundler import fleet", "read 2 files (", "fleet.yaml, ", "2 documents skipped"],
        ),
    ],
    ids=["only-a-chart", "only-fleet-files"],
)
def test_inputs_without_any_bundler_object_fail_naming_what_was_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, str], fragments: list[str]
) -> None:
    root = _tree(tmp_path / "repo", files)
    code, out, err = run_cli(capsys, "render", "-f", str(root))
    assert (code, out) == (1, "")
    assert f"error: no Bundle, Cluster, ClusterGroup or Cluster API Cluster in {root}: read" in err
    for fragment in fragments:
        assert fragment in err, err


def test_strict_refuses_a_chart_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = _tree(tmp_path / "repo", {"app.yaml": BUNDLE, "web/Chart.yaml": "name: web\n"})
    code, _, err = run_cli(capsys, "render", "-f", str(root), "--strict")
    assert code == 2
    assert f"error: {root}/web: skipped a Helm chart directory" in err
    assert "(--strict refuses it)" in err
