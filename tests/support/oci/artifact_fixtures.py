"""Flux artifacts for the OCI tests: tarballs built entry by entry (hostile ones included), and
the `bundler artifact` CLI run in-process."""

from __future__ import annotations

import gzip
import io
import sys
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from tests.support import cli_helpers
from tests.support.cli_helpers import CliResult


@dataclass(frozen=True)
class TarEntry:
    """One entry of a hand-made tarball: a file (`data`), a directory, or a link to `link`."""

    name: str
    data: bytes = b""
    kind: bytes = tarfile.REGTYPE
    link: str = ""


def tarball(entries: Sequence[TarEntry]) -> bytes:
    """A gzipped tar of exactly `entries`, in their order, whatever they say."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.type = entry.kind
            info.linkname = entry.link
            info.size = len(entry.data) if entry.kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(entry.data) if info.size else None)
    return gzip.compress(raw.getvalue())


RunArtifactCli = Callable[..., CliResult]


@pytest.fixture
def run_artifact_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> RunArtifactCli:
    """Run `bundler artifact ...` in-process, with `stdin` as its standard input."""

    def run(*argv: str, stdin: str = "") -> CliResult:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return cli_helpers.run_cli(capsys, "artifact", *argv)

    return run
