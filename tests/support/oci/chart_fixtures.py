"""Charts on disk and the `bundler chart` CLI run in-process for the OCI tests: the fixtures
make_chart and run_cli and the types of what they give."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.support import cli_helpers
from tests.support.cli_helpers import CliResult

TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
"""


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
