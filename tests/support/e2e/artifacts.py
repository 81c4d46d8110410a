"""Publishing directories of manifests for the e2e tests, as a user does: `bundler artifact
push` into the test registry (Flux's artifact format, which source-controller reads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def push_manifests(directory: Path, remote: str) -> None:
    """`bundler artifact push DIRECTORY REMOTE` (oci://HOST/PATH:TAG), failing the test on error."""
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "artifact", "push", str(directory), remote],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"bundler artifact push failed: {done.stderr}"
