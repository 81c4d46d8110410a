"""A Git server on 127.0.0.1 for tests: Git's smart HTTP protocol, served by `git http-backend`.

Flux's GitRepository clones over HTTP(S) or SSH, never `git://`, so the server speaks smart HTTP:
a threaded HTTP server on a port the kernel picks runs Git's own CGI program, `git http-backend`,
for each request, with the repositories under one directory (`GIT_PROJECT_ROOT`, every one
exported, read only: no `receive-pack`). With `username` and `password` it asks for HTTP basic
authentication first, as a Git host with private repositories does.

`serve_git(directory)` starts it and stops it on exit; `GitServer.create(name, files)` makes the
bare repository `NAME.git` from a commit of `files` on `main`, `GitServer.commit(name, files)` adds
a commit replacing the files, and both return the commit's SHA-1. The `git_server` fixture gives a
server on a temporary directory for one test.
"""

from __future__ import annotations

import base64
import hmac
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

BRANCH = "main"
# A request runs one Git process; one that takes longer than this is a stuck test, not a slow one.
BACKEND_TIMEOUT_S = 120
# Who commits, fixed so that the same files give the same commit in every test run.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "bundler tests",
    "GIT_AUTHOR_EMAIL": "tests@bundler.invalid",
    "GIT_COMMITTER_NAME": "bundler tests",
    "GIT_COMMITTER_EMAIL": "tests@bundler.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def git(*args: str, cwd: Path | None = None) -> str:
    """Run `git ARGS`, isolated from the user's and the system's configuration; its stdout."""
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd or Path(tempfile.gettempdir())),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        **_IDENTITY,
    }
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BACKEND_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


class _Backend(BaseHTTPRequestHandler):
    """Each request is one run of `git http-backend`, as CGI: the request in the environment and on
    stdin, the answer's headers and body on stdout."""

    def __init__(self, *args: object, server_state: GitServer) -> None:
        self._state = server_state
        super().__init__(*args)  # type: ignore[arg-type]

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: a test's output is its own."""

    def _authorized(self) -> bool:
        expected = self._state.authorization
        given = self.headers.get("Authorization", "")
        return expected is None or hmac.compare_digest(given.encode(), expected.encode())

    def _serve(self) -> None:
        if not self._authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self._state.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GATEWAY_INTERFACE": "CGI/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": self.headers.get("Content-Length", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "HTTP_GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        if self._state.username is not None:
            environment["REMOTE_USER"] = self._state.username
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        done = subprocess.run(
            ["git", "http-backend"],
            input=body,
            env=environment,
            capture_output=True,
            timeout=BACKEND_TIMEOUT_S,
            check=False,
        )
        head, _, content = done.stdout.partition(b"\r\n\r\n")
        status = 200 if done.returncode == 0 else 500
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)


@dataclass
class GitServer:
    """A running Git server: where it listens, the repositories it serves, who may read them."""

    root: Path
    base_url: str = ""
    username: str | None = None
    password: str | None = None

    @property
    def authorization(self) -> str | None:
        if self.username is None:
            return None
        token = base64.b64encode(f"{self.username}:{self.password or ''}".encode()).decode()
        return f"Basic {token}"

    def url(self, name: str) -> str:
        """The clone URL of repository `name`."""
        return f"{self.base_url}/{name}.git"

    def create(self, name: str, files: Mapping[str, str]) -> str:
        """The bare repository `name.git` holding one commit of `files` on `main`; its SHA-1."""
        git(
            "init",
            "--quiet",
            "--bare",
            f"--initial-branch={BRANCH}",
            str(self.root / f"{name}.git"),
        )
        return self.commit(name, files, message="first commit")

    def commit(self, name: str, files: Mapping[str, str], *, message: str = "change") -> str:
        """A new commit on `main` of `name.git` whose tree is exactly `files`; its SHA-1."""
        with tempfile.TemporaryDirectory(prefix="bundler-git-") as scratch:
            work = Path(scratch)
            git("clone", "--quiet", str(self.root / f"{name}.git"), str(work / "tree"))
            tree = work / "tree"
            for child in tree.iterdir():
                if child.name != ".git":
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
            for relative, text in files.items():
                path = tree / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            git("add", "--all", cwd=tree)
            git("commit", "--quiet", "--allow-empty", "-m", message, cwd=tree)
            git("push", "--quiet", "origin", f"HEAD:{BRANCH}", cwd=tree)
            return git("rev-parse", "HEAD", cwd=tree).strip()


@contextmanager
def serve_git(
    root: Path, *, username: str | None = None, password: str | None = None
) -> Iterator[GitServer]:
    """A Git smart HTTP server on 127.0.0.1 serving the repositories under `root`, stopped on
    exit."""
    root.mkdir(parents=True, exist_ok=True)
    state = GitServer(root=root, username=username, password=password)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Backend, server_state=state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="git-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[GitServer]:
    """A Git server for one test, its repositories in the test's temporary directory."""
    with serve_git(tmp_path / "git-server") as server:
        yield server
