"""The repository stands alone: its documents link inside it, nothing reads the shared folder."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# Spelled in two pieces so that this file does not name the folder it looks for.
_SHARED = "../" + "shared"
_DOCUMENTS = sorted(
    [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("examples/**/*.md")]
)


def _tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name]


@pytest.mark.parametrize("document", _DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_links_resolve_inside_the_repository(document: Path) -> None:
    broken = []
    for target in _LINK.findall(document.read_text()):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        resolved = (document.parent / target.split("#", 1)[0]).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(target)
    assert broken == []


def test_nothing_reads_the_shared_design_folder() -> None:
    readers = [
        str(path.relative_to(ROOT))
        for path in _tracked_files()
        if path.suffix in {".py", ".toml", ".cfg", ".sh", ".md", ".yaml", ""}
        and path.is_file()
        and _SHARED in path.read_text(errors="replace")
    ]
    assert readers == []
