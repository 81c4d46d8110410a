"""`bundler diff`: two revisions of a git repository made in the test, paths, the live management
cluster (the test API server), and with --manifests charts from a loopback Helm repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import BUNDLE_DEPLOYMENT, NAMESPACE
from bundler.apiserver import ApiServer
from tests.support.cli_helpers import CliResult, run_cli
from tests.support.commands.chart_fleet import bundle, cluster, helm_repo, write_fleet
from tests.support.helm_repository import ENDLESS_LOOP, HelmRepository, write_chart

__all__ = ["helm_repo"]
pytestmark = pytest.mark.usefixtures("docker_config")

REPO = "https://charts.example"
PROD = cluster("prod-1", {"env": "prod"})
DEV = cluster("dev-1", {"env": "dev"})
EDGE = cluster("edge-1", {"env": "edge"})
Obj = dict[str, Any]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example", *args],
        cwd=repo,
        capture_output=True,
        check=True,
        text=True,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty git repository, the current directory of the test."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    return root


def commit(repo: Path, message: str, *docs: Obj, path: str = "fleet/fleet.yaml") -> None:
    write_fleet(repo / path, *docs)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def diff(capsys: pytest.CaptureFixture[str], *argv: str) -> CliResult:
    return run_cli(capsys, "diff", *argv)


def test_two_revisions_differ_per_cluster_by_version_values_and_deployments(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    commit(repo, "one", PROD, DEV, bundle("web", REPO, "web", "1.0.0", {"x": 1, "keep": "k"}))
    commit(repo, "two", PROD, EDGE, bundle("web", REPO, "web", "1.1.0", {"x": 2, "keep": "k"}))
    code, out, err = diff(capsys, "--from", "HEAD~1", "--to", "fleet", "-o", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["bundles"] == {"ws/web": {"changed": 1, "created": 1, "removed": 1}}
    changes = {d["cluster"]: d for d in data["deployments"]}
    assert {c: d["change"] for c, d in changes.items()} == {
        "ws/dev-1": "removed",
        "ws/edge-1": "created",
        "ws/prod-1": "changed",
    }
    prod = changes["ws/prod-1"]
    assert (prod["oldVersion"], prod["newVersion"]) == ("1.0.0", "1.1.0")
    assert prod["values"] == [{"path": "x", "change": "changed", "old": 1, "new": 2}]


def test_text_output_lists_each_bundle_then_its_clusters(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    commit(repo, "one", PROD, bundle("web", REPO, "web", "1.0.0", {"x": 1}))
    write_fleet(repo / "fleet/fleet.yaml", PROD, bundle("web", REPO, "web", "1.0.0", {"x": 2}))
    code, out, _ = diff(capsys, "--from", "main", "--to", "fleet/fleet.yaml")
    assert code == 0
    assert out.splitlines() == [
        "Bundle ws/web: 1 changed",
        "  ~ ws/prod-1: 1 value",
        "      values.x: 1 -> 2",
        "1 deployments change in 1 bundle (0 unchanged)",
    ]


@pytest.mark.parametrize(
    ("new_values", "expected"), [({"x": 1}, 0), ({"x": 2}, 1)], ids=["no-change", "changes"]
)
def test_exit_code_tells_ci_whether_anything_changes(
    capsys: pytest.CaptureFixture[str], repo: Path, new_values: Obj, expected: int
) -> None:
    commit(repo, "one", PROD, bundle("web", REPO, "web", "1.0.0", {"x": 1}))
    write_fleet(repo / "fleet/fleet.yaml", PROD, bundle("web", REPO, "web", "1.0.0", new_values))
    code, _, err = diff(capsys, "--from", "main", "--to", "fleet", "--exit-code")
    assert (code, err) == (expected, "")


def test_a_directory_the_old_revision_lacks_is_all_created(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    commit(repo, "unrelated", PROD, path="other/fleet.yaml")
    write_fleet(repo / "fleet/fleet.yaml", PROD, DEV, bundle("web", REPO, "web", "1.0.0"))
    code, out, _ = diff(capsys, "--from", "main", "--to", "fleet", "-o", "json")
    assert code == 0
    assert json.loads(out)["bundles"] == {"ws/web": {"created": 2}}


@pytest.mark.parametrize(
    ("cwd", "to"),
    [("", "team/fleet"), ("team", "fleet"), ("team/fleet", "."), ("team/fleet/deep", "..")],
    ids=["top", "subdirectory", "the-directory-itself", "below-it"],
)
def test_a_revision_is_read_at_the_same_paths_from_any_directory(
    capsys: pytest.CaptureFixture[str],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    cwd: str,
    to: str,
) -> None:
    commit(repo, "one", PROD, DEV, bundle("web", REPO, "web", "1.0.0"), path="team/fleet/a.yaml")
    write_fleet(repo / "team/fleet/a.yaml", PROD, DEV, bundle("web", REPO, "web", "2.0.0"))
    (repo / "team/fleet/deep").mkdir(exist_ok=True)
    monkeypatch.chdir(repo / cwd)
    code, out, err = diff(capsys, "--from", "main", "--to", to, "-o", "json")
    assert code == 0, err
    assert json.loads(out)["bundles"] == {"ws/web": {"changed": 2}}


def test_markdown_is_a_pull_request_comment(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    commit(repo, "one", PROD, DEV, bundle("web", REPO, "web", "1.0.0"))
    write_fleet(repo / "fleet/fleet.yaml", PROD, DEV, bundle("web", REPO, "web", "2.0.0"))
    code, out, _ = diff(capsys, "--from", "main", "--to", "fleet", "-o", "markdown")
    assert code == 0
    assert out.startswith("### bundler diff: 2 deployments change in 1 bundle (0 unchanged)\n")
    assert "| ws/web | 0 | 0 | 2 |" in out
    assert "<b>ws/web</b> on <code>ws/dev-1</code>: chart 1.0.0 -> 2.0.0" in out


def test_a_cluster_failing_to_render_is_an_error_and_the_others_are_compared(
    capsys: pytest.CaptureFixture[str], repo: Path
) -> None:
    values = {"x": "${ cluster.labels.env }", "zone": "${ cluster.labels.zone }"}
    commit(
        repo,
        "one",
        PROD,
        cluster("zoned", {"env": "a", "zone": "z"}),
        bundle("web", REPO, "web", "1.0.0"),
    )
    write_fleet(
        repo / "fleet/fleet.yaml",
        PROD,
        cluster("zoned", {"env": "a", "zone": "z"}),
        bundle("web", REPO, "web", "1.0.0", values),
    )
    code, out, err = diff(capsys, "--from", "main", "--to", "fleet", "--exit-code", "-o", "json")
    assert code == 2
    assert [d["cluster"] for d in json.loads(out)["deployments"]] == ["ws/zoned"]
    assert err.startswith("error: new: ") and "prod-1" in err and "zone" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "no-such-rev", "--to", "fleet"], "--from: 'no-such-rev' is neither"),
        (["--from", "main", "--live", "--to", "fleet"], "--from: give either --from OLD or --live"),
        (["--to", "fleet"], "--from: give either --from OLD or --live"),
    ],
    ids=["unknown-revision", "from-and-live", "neither"],
)
def test_bad_sides_are_invalid_input(
    capsys: pytest.CaptureFixture[str], repo: Path, argv: list[str], message: str
) -> None:
    commit(repo, "one", PROD)
    code, _, err = diff(capsys, *argv)
    assert code == 2
    assert err.startswith(f"error: {message}")


# Links a revision holds that lead out of its tree: (id, link path, target, what stderr says).
OUTSIDE_LINKS = [
    ("absolute-link-elsewhere", "other/passwd", "/etc/passwd", None),
    ("escaping-link-elsewhere", "fleet/notes", "../../outside", None),
    (
        "absolute-yaml-link-read",
        "fleet/abs.yaml",
        "/etc/hosts",
        "--from: main:fleet/abs.yaml is a symbolic link out of the repository (to /etc/hosts)",
    ),
    (
        "escaping-yaml-link-read",
        "fleet/up.yaml",
        "../../outside.yaml",
        "--from: main:fleet/up.yaml is a symbolic link out of the repository "
        "(to ../../outside.yaml)",
    ),
]


@pytest.mark.parametrize(
    ("link", "target", "message"),
    [c[1:] for c in OUTSIDE_LINKS],
    ids=[c[0] for c in OUTSIDE_LINKS],
)
def test_links_out_of_a_revision_are_left_out_or_named_in_one_line(
    capsys: pytest.CaptureFixture[str], repo: Path, link: str, target: str, message: str | None
) -> None:
    write_fleet(repo / "fleet/fleet.yaml", PROD, bundle("web", REPO, "web", "1.0.0"))
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "with a link")
    (repo / link).unlink()
    code, out, err = diff(capsys, "--from", "main", "--to", "fleet", "-o", "json")
    if message is None:
        assert (code, err) == (0, ""), err
        assert json.loads(out)["bundles"] == {}
    else:
        assert (code, err) == (2, f"error: {message}; a revision is read only inside its tree\n")


def test_manifests_show_objects_changed_with_a_unified_diff(
    capsys: pytest.CaptureFixture[str], repo: Path, helm_repo: HelmRepository, tmp_path: Path
) -> None:
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n"
    helm_repo.publish(write_chart(tmp_path / "src", "web", "1.0.0"))
    helm_repo.publish(
        write_chart(tmp_path / "src", "web", "1.1.0", {"templates/svc.yaml": service})
    )
    commit(repo, "one", PROD, bundle("web", helm_repo.url, "web", "1.0.0", {"greeting": "a"}))
    write_fleet(
        repo / "fleet/fleet.yaml",
        PROD,
        bundle("web", helm_repo.url, "web", "1.1.0", {"greeting": "b"}),
    )
    argv = ["--from", "main", "--to", "fleet", "--manifests", "--cache-dir", str(tmp_path / "c")]
    code, out, err = diff(capsys, *argv)
    assert code == 0, err
    assert "  ~ ws/prod-1: chart 1.0.0 -> 1.1.0, 1 value, 2 objects" in out
    assert "      ~ ConfigMap apps/web-config" in out
    assert "          -  greeting: a\n          +  greeting: b\n" in out
    assert "      + Service web" in out


def test_a_chart_that_renders_forever_is_stopped_at_the_render_timeout(
    capsys: pytest.CaptureFixture[str], repo: Path, helm_repo: HelmRepository, tmp_path: Path
) -> None:
    # The chart that never ends is the only one rendered, so the short timeout decides alone.
    helm_repo.publish(
        write_chart(tmp_path / "src", "web", "1.1.0", {"templates/x.yaml": ENDLESS_LOOP})
    )
    commit(repo, "one", PROD)
    write_fleet(repo / "fleet/fleet.yaml", PROD, bundle("web", helm_repo.url, "web", "1.1.0"))
    code, _, err = diff(
        capsys,
        *("--from", "main", "--to", "fleet", "--manifests", "--cache-dir", str(tmp_path / "c")),
        *("--render-timeout", "2"),
    )
    assert code == 1
    assert err.splitlines() == [
        f"error: new: BundleDeployment ws/web: chart web 1.1.0 from {helm_repo.url} on cluster "
        "ws/prod-1: rendering took longer than the --render-timeout of 2s; stopped it"
    ]


def test_live_compares_new_inputs_with_the_management_clusters_deployments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = write_fleet(tmp_path / "old.yaml", PROD, DEV, bundle("web", REPO, "web", "1.0.0"))
    new = write_fleet(tmp_path / "new.yaml", PROD, bundle("web", REPO, "web", "1.0.1"))
    code, rendered, _ = run_cli(capsys, "render", "-f", str(old), "-o", "json")
    assert code == 0
    with ApiServer() as server:
        for bd in json.loads(rendered)["items"]:
            server.store.create(NAMESPACE, {"metadata": {"name": bd["metadata"]["namespace"]}})
            server.store.create(BUNDLE_DEPLOYMENT, bd)
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        code, out, err = diff(
            capsys, "--live", "--kubeconfig", str(kubeconfig), "--to", str(new), "-o", "json"
        )
    assert code == 0, err
    changes = {d["cluster"]: d["change"] for d in json.loads(out)["deployments"]}
    assert changes == {"ws/dev-1": "removed", "ws/prod-1": "changed"}


@pytest.mark.parametrize(
    ("extra", "expected"), [([], 1), (["--exit-code"], 2)], ids=["plain", "exit-code"]
)
def test_a_failure_of_the_whole_diff_is_exit_2_under_exit_code(
    capsys: pytest.CaptureFixture[str],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    expected: int,
) -> None:
    commit(repo, "one", PROD, bundle("web", REPO, "web", "1.0.0"))
    monkeypatch.setitem(sys.modules, "helm_python", None)  # no Helm engine at all
    only_git = repo.parent / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))  # git, but no helm binary
    code, _, err = diff(capsys, "--from", "main", "--to", "fleet", "--manifests", *extra)
    assert code == expected
    assert "pip install helm-python-sdk" in err


HOOK_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: migrate-{{ randAlphaNum 8 | lower }}
  annotations: {"helm.sh/hook": "pre-install,pre-upgrade"}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}}
"""
TEST_POD = """apiVersion: v1
kind: Pod
metadata:
  name: smoke-{{ randAlphaNum 8 | lower }}
  annotations: {"helm.sh/hook": test}
spec: {containers: [{name: t, image: busybox}]}
"""
SECRET = """apiVersion: v1
kind: Secret
metadata: {name: db}
data: {password: {{ .Values.password | b64enc }}, user: {{ "app" | b64enc }}}
"""


def test_manifests_leave_hooks_out_and_never_print_secret_values(
    capsys: pytest.CaptureFixture[str], repo: Path, helm_repo: HelmRepository, tmp_path: Path
) -> None:
    files = {"templates/hook.yaml": HOOK_JOB, "templates/test.yaml": TEST_POD}
    helm_repo.publish(
        write_chart(tmp_path / "src", "web", "1.0.0", {**files, "templates/secret.yaml": SECRET})
    )
    old = bundle("web", helm_repo.url, "web", "1.0.0", {"password": "hunter2"})
    commit(repo, "one", PROD, old)
    argv = ["--from", "main", "--to", "fleet", "--manifests", "--cache-dir", str(tmp_path / "c")]
    # Identical input: the hooks' random names are not part of the release, so nothing changes.
    code, out, err = diff(capsys, *argv, "--exit-code")
    assert code == 0, out + err
    # A new password: the Secret changes, its values are never printed.
    write_fleet(
        repo / "fleet/fleet.yaml",
        PROD,
        bundle("web", helm_repo.url, "web", "1.0.0", {"password": "correct-horse"}),
    )
    for fmt in ("text", "json", "markdown"):
        code, out, err = diff(capsys, *argv, "-o", fmt)
        assert code == 0, err
        assert "Secret" in out and "password" in out and "YXBw" not in out
        # (the Bundle's own values are in git: shown; the Secret's data is not)
        assert "aHVudGVyMg==" not in out and "Y29ycmVjdC1ob3JzZQ==" not in out
        assert "(redacted hmac-sha256:" in out
        assert "migrate-" not in out and "smoke-" not in out
    # With test.enable the HelmRelease runs the test hooks: render shows them, marked.
    tested = bundle("web", helm_repo.url, "web", "1.0.0", {"password": "hunter2"})
    tested["spec"]["helm"]["test"] = {"enable": True}
    write_fleet(repo / "fleet/fleet.yaml", PROD, tested)
    render = ["render", "-f", "fleet", "--manifests", "--cache-dir", str(tmp_path / "c")]
    code, out, err = run_cli(capsys, *render, "-o", "json")
    assert code == 0, err
    rendered = json.loads(out)["items"]
    hooks = {
        o["metadata"]["name"].split("-")[0]: o["metadata"]["annotations"].get(
            "bundler.dev/helm-hook"
        )
        for o in rendered
        if o["kind"] in ("Pod", "Job")
    }
    assert hooks == {"smoke": "test"}
