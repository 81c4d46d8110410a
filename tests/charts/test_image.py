"""The container image: what the Dockerfile promises, and its entrypoint run from the wheel.

No Docker daemon here, so the image itself is not built. What can be proven is: the Dockerfile
is multi-stage, installs the project into a venv that the final stage runs as a numeric non-root
user with nothing to write outside /tmp, and uses `bundler` as the entrypoint; and the wheel the
build stage makes, installed alone into a fresh venv, runs the image's commands (`bundler manager
--help`, `bundler agent --help`). The wheel's dependencies come from this test environment (a
`.pth` file in the fresh venv), which keeps the test offline and fast; `pip check` then proves the
wheel's declared requirements are all met by them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
IMAGE_USER = "65532:65532"
VENV = "/opt/bundler"
CONTINUATION = "\\"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined and comments dropped."""
    found: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        continued = line.endswith(CONTINUATION)
        pending = f"{pending} {line.removesuffix(CONTINUATION).strip()}".strip()
        if continued:
            continue
        keyword, _, arguments = pending.partition(" ")
        found.append(Instruction(keyword.upper(), arguments.strip()))
        pending = ""
    return found


def stages(text: str) -> list[list[Instruction]]:
    """Instructions grouped by build stage (each starts at a FROM)."""
    grouped: list[list[Instruction]] = []
    for instruction in instructions(text):
        if instruction.keyword == "FROM":
            grouped.append([])
        if grouped:
            grouped[-1].append(instruction)
    return grouped


def _env(stage: list[Instruction]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for instruction in stage:
        if instruction.keyword == "ENV":
            for pair in instruction.arguments.split():
                key, _, value = pair.partition("=")
                pairs[key] = value
    return pairs


def _last(stage: list[Instruction], keyword: str) -> str:
    values = [i.arguments for i in stage if i.keyword == keyword]
    assert values, f"the final stage has no {keyword}"
    return values[-1]


@pytest.fixture(scope="module")
def final_stage() -> list[Instruction]:
    grouped = stages(DOCKERFILE.read_text(encoding="utf-8"))
    assert len(grouped) >= 2, "the Dockerfile is not multi-stage"
    return grouped[-1]


def test_dockerfile_is_multi_stage_on_a_slim_python_base() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    image = next(i.arguments for i in instructions(text) if i.keyword == "ARG")
    assert image.startswith("PYTHON_IMAGE=python:3.1") and "-slim" in image
    bases = [i.arguments for i in instructions(text) if i.keyword == "FROM"]
    assert bases == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]


def test_build_stage_installs_the_wheel_into_a_venv() -> None:
    build = stages(DOCKERFILE.read_text(encoding="utf-8"))[0]
    run = " ".join(i.arguments for i in build if i.keyword == "RUN")
    assert "pip wheel --no-deps" in run
    assert f"python -m venv {VENV}" in run
    assert f"{VENV}/bin/pip install /wheels/" in run
    # Bytecode is compiled at build time: the running container cannot write it.
    assert "compileall" in run


def test_final_stage_runs_the_venv_as_a_numeric_non_root_user(
    final_stage: list[Instruction],
) -> None:
    copies = [i.arguments for i in final_stage if i.keyword == "COPY"]
    assert copies == [f"--from=build {VENV} {VENV}"], "only the venv reaches the final image"
    user = _last(final_stage, "USER")
    assert user == IMAGE_USER
    assert all(part.isdigit() and int(part) != 0 for part in user.split(":"))
    assert json.loads(_last(final_stage, "ENTRYPOINT")) == ["bundler"]
    assert not [i for i in final_stage if i.keyword == "RUN"], "the final stage runs nothing"


def test_final_stage_writes_nothing_outside_tmp(final_stage: list[Instruction]) -> None:
    env = _env(final_stage)
    assert env["PATH"].startswith(f"{VENV}/bin:")
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["HOME"] == "/tmp"
    assert env["TMPDIR"] == "/tmp"
    assert _last(final_stage, "WORKDIR") == "/tmp"


def test_dockerignore_sends_only_the_sources() -> None:
    lines = [
        line
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert lines[0] == "*", "everything is excluded unless named"
    assert {"!pyproject.toml", "!README.md", "!LICENSE", "!bundler/"} <= set(lines)


def test_build_stage_copies_every_file_the_project_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    named = {"pyproject.toml", project["readme"], *project["license-files"]}
    build = stages(DOCKERFILE.read_text(encoding="utf-8"))[0]
    copied = {source for i in build if i.keyword == "COPY" for source in i.arguments.split()[:-1]}
    assert named <= copied


packaging = pytest.mark.packaging


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel of this checkout; returns its bin directory."""
    work = tmp_path_factory.mktemp("image")
    wheels = work / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--wheel-dir", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("bundler_fleet-*.whl")
    target = work / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The dependencies, from this environment; a path listed in a .pth file is not a site
    # directory, so this environment's editable bundler stays invisible there.
    (Path(site) / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return target / "bin"


def _run(binary: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # A clean environment as in the image: no PYTHONPATH pointing at this checkout.
    env = {"PATH": f"{binary}:/usr/bin:/bin", "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [str(binary / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        env=env,
        cwd="/tmp",
        check=False,
    )


@packaging
def test_wheel_holds_the_whole_package_outside_the_checkout(installed_wheel: Path) -> None:
    found = _run(installed_wheel, "python", "-c", "import bundler; print(bundler.__file__)")
    assert found.returncode == 0, found.stderr
    location = Path(found.stdout.strip())
    assert installed_wheel.parent in location.parents
    assert ROOT not in location.parents


@packaging
def test_wheel_is_bundler_fleet_under_the_apache_license(installed_wheel: Path) -> None:
    script = (
        "import importlib.metadata as m; d = m.distribution('bundler-fleet'); "
        "print(d.metadata['Name'], d.metadata['License-Expression']); "
        "print(d.read_text('licenses/LICENSE').split(chr(10))[1].strip())"
    )
    found = _run(installed_wheel, "python", "-c", script)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == ["bundler-fleet Apache-2.0", "Apache License"]


@packaging
def test_wheel_declares_requirements_the_environment_meets(installed_wheel: Path) -> None:
    check = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(installed_wheel / "python"), "check"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert check.returncode == 0, check.stdout + check.stderr


@packaging
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["manager", "--help"], "usage: bundler manager"),
        (["agent", "--help"], "usage: bundler agent"),
        (["--version"], "bundler "),
    ],
    ids=["manager", "agent", "version"],
)
def test_image_entrypoint_commands_run_from_the_wheel(
    installed_wheel: Path, argv: list[str], expected: str
) -> None:
    result = _run(installed_wheel, "bundler", *argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(expected)
