"""Tests of reading input files for the offline commands: size cap, hostile scalars, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler import yamlload
from tests.cli_helpers import run_cli

CLUSTER = "apiVersion: bundler.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c, namespace: ws}\n"

#: (id, file contents, what the one line on stderr says)
BAD_FILES = [
    ("over-4300-digits", CLUSTER + f"spec: {{x: {'9' * 5000}}}\n", "does not fit in 64 bits"),
    ("lone-surrogate", CLUSTER + 'spec: {x: "\\ud800"}\n', "in.yaml:0: malformed YAML (line 4)"),
    ("deep", CLUSTER + "spec: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than 100"),
]


@pytest.mark.parametrize(
    ("text", "message"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES]
)
def test_hostile_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(text, encoding="utf-8")
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
    assert f"{path}: the file is larger than 16 MiB, the limit for one input file" in result.stderr
