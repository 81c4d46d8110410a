"""The tests' Git server (tests/support/git_server.py) serves what `git clone` and `git fetch`
read over smart HTTP, and asks for credentials when it has them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git_server import GitServer, git, serve_git

FILES = {
    "kustomization.yaml": "resources: [configmap.yaml]\n",
    "configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\n",
}


def _tree(clone: Path) -> dict[str, str]:
    return {
        p.relative_to(clone).as_posix(): p.read_text()
        for p in sorted(clone.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(clone).parts
    }


def test_a_clone_over_http_gets_the_commit_and_a_fetch_the_next(
    git_server: GitServer, tmp_path: Path
) -> None:
    first = git_server.create("manifests", FILES)
    clone = tmp_path / "clone"
    git("clone", "--quiet", git_server.url("manifests"), str(clone))
    assert git("rev-parse", "HEAD", cwd=clone).strip() == first
    assert _tree(clone) == FILES
    changed = {"kustomization.yaml": "resources: []\n"}
    second = git_server.commit("manifests", changed)
    git("pull", "--quiet", "--ff-only", cwd=clone)
    assert git("rev-parse", "HEAD", cwd=clone).strip() == second != first
    assert _tree(clone) == changed


def test_the_server_is_read_only(git_server: GitServer, tmp_path: Path) -> None:
    git_server.create("manifests", FILES)
    clone = tmp_path / "clone"
    git("clone", "--quiet", git_server.url("manifests"), str(clone))
    (clone / "extra.yaml").write_text("a: 1\n")
    git("add", "extra.yaml", cwd=clone)
    git("commit", "--quiet", "-m", "extra", cwd=clone)
    with pytest.raises(AssertionError, match="git push"):
        git("push", "--quiet", "origin", "HEAD:main", cwd=clone)


def test_with_credentials_only_their_holder_clones(tmp_path: Path) -> None:
    with serve_git(tmp_path / "repos", username="flux", password="s3cret") as server:
        server.create("private", FILES)
        host = server.base_url.removeprefix("http://")
        with pytest.raises(AssertionError, match=r"Authentication failed|could not read Username"):
            git("clone", "--quiet", server.url("private"), str(tmp_path / "anonymous"))
        with pytest.raises(AssertionError, match="Authentication failed"):
            git("clone", "--quiet", f"http://flux:wrong@{host}/private.git", str(tmp_path / "w"))
        clone = tmp_path / "clone"
        git("clone", "--quiet", f"http://flux:s3cret@{host}/private.git", str(clone))
        assert _tree(clone) == FILES


def test_a_stopped_server_is_no_longer_there(tmp_path: Path) -> None:
    with serve_git(tmp_path / "repos") as server:
        server.create("manifests", FILES)
        url = server.url("manifests")
    with pytest.raises(AssertionError, match=r"Failed to connect|Connection refused"):
        git("clone", "--quiet", url, str(tmp_path / "clone"))
