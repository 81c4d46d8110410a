"""OCI test fixtures: real registries, an isolated Docker config, charts on disk, the CLI."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.support import cli_helpers
from tests.support.cli_helpers import CliResult
from tests.support.registry_fixtures import oci_registry, oci_registry_basic_auth, oci_registry_tls

__all__ = ["oci_registry", "oci_registry_basic_auth", "oci_registry_tls"]

TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
"""


@pytest.fixture(autouse=True)
def _no_user_docker_config(docker_config: Path) -> None:
    """Every test of this folder runs with an empty Docker config
    (tests.support.registry_fixtures)."""


MakeChart = Callable[..., Path]


@pytest.fixture
def make_chart(tmp_path: Path) -> MakeChart:
    """Write a small chart directory; `files` adds or replaces files (relative path -> text)."""

    def make(
        name: str = "demo",
        version: str = "1.0.0",
        *,
        files: Mapping[str, str] | None = None,
        parent: Path | None = None,
    ) -> Path:
        root = (parent or tmp_path / "charts") / name
        contents = {
            "Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: {version}\n"
            "description: a test chart\n",
            "values.yaml": "greeting: hello\n",
            "templates/configmap.yaml": TEMPLATE,
            **(files or {}),
        }
        for relative, text in contents.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return root

    return make


RunCli = Callable[..., CliResult]


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> RunCli:
    """Run `bundler chart ...` in-process, with `stdin` as its standard input."""

    def run(*argv: str, stdin: str = "") -> CliResult:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return cli_helpers.run_cli(capsys, "chart", *argv)

    return run


@pytest.fixture
def repo_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """A repository path unique to the test, so tests sharing a registry never collide."""
    yield "t/" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
