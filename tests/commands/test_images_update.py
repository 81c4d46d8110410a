"""`bundler images update` against real pushed images (docker-registry on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.cli_helpers import CliResult, run_cli
from tests.support.manager.registry_charts import docker_config_json
from tests.support.oci.hostile_server import HostileServer, Out, hostile, whole
from tests.support.registry_fixtures import LocalRegistry, closed_port
from tests.support.registry_images import PushedManifest, push_image, push_index, repository_path

__all__ = ["hostile"]

BUNDLE = """\
apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata:
  name: app
  namespace: ws
spec:
  helm:
    repo: oci://{host}/charts
    chart: app
    version: 1.0.0
  images:
    - name: web
      repository: {repository}
      policy:
        semver:
          range: "^1"
{extra}  targets:
    - name: all
      clusterSelector: {{}}
"""

VALUES = """\
# Values the CI job keeps current; comments and layout stay as they are.
web:
  image: {repository}:1.0.0  # {{"$imagepolicy": "ws/app:web"}}
  tag: "1.0.0" # {{"$imagepolicy": "ws/app:web:tag"}}
  repo: '{repository}'   # {{"$imagepolicy": "ws/app:web:name"}}
  digest: sha256:0 # {{"$imagepolicy": "ws/app:web:digest"}}
sidecars:
  - {repository}:1.0.0 # {{"$imagepolicy": "ws/app:web"}}
flux: ghcr.io/x:1 # {{"$imagepolicy": "flux-system:x"}}
"""


@pytest.fixture
def repository(oci_registry: LocalRegistry, request: pytest.FixtureRequest) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
    return f"{oci_registry.host}/t/{name}"


def write_inputs(workdir: Path, repository: str, extra: str = "") -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    host = repository.split("/", 1)[0]
    (workdir / "bundle.yaml").write_text(
        BUNDLE.format(host=host, repository=repository, extra=extra)
    )
    (workdir / "values.yaml").write_text(VALUES.format(repository=repository))
    return workdir


def update(capsys: pytest.CaptureFixture[str], *argv: str) -> CliResult:
    return run_cli(capsys, "images", "update", *argv)


def expected_values(repository: str, tag: str, digest: str) -> str:
    return (
        VALUES.format(repository=repository)
        .replace(f"{repository}:1.0.0", f"{repository}:{tag}")
        .replace('"1.0.0"', f'"{tag}"')
        .replace("sha256:0", digest)
    )


def test_marked_values_are_rewritten_and_reported(
    capsys: pytest.CaptureFixture[str],
    oci_registry: LocalRegistry,
    repository: str,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    for tag in ("1.0.0", "1.1.0", "2.0.0"):
        push_image(oci_registry, repository_path(repository), tag)
    newest: PushedManifest = push_index(oci_registry, repository_path(repository), "1.2.0")
    inputs = write_inputs(tmp_path / "in", repository)
    values = inputs / "values.yaml"

    result = update(capsys, "-f", str(inputs))

    assert result.code == 1, result.stderr
    assert "notice" not in result.stderr  # values files are where markers live: no noise
    assert values.read_text() == expected_values(repository, "1.2.0", newest.digest)
    assert result.stdout.splitlines() == [
        f"{values}:3: {repository}:1.0.0 -> {repository}:1.2.0",
        f"{values}:4: 1.0.0 -> 1.2.0",
        f"{values}:6: sha256:0 -> {newest.digest}",
        f"{values}:8: {repository}:1.0.0 -> {repository}:1.2.0",
    ]
    again = update(capsys, "-f", str(inputs))
    assert (again.code, again.stdout) == (0, "")
    assert "current" in again.stderr


def test_dry_run_prints_without_writing(
    capsys: pytest.CaptureFixture[str],
    oci_registry: LocalRegistry,
    repository: str,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    push_image(oci_registry, repository_path(repository), "1.5.0")
    inputs = write_inputs(tmp_path / "in", repository)
    before = (inputs / "values.yaml").read_text()
    result = update(
        capsys, "--dry-run", "-f", str(inputs / "bundle.yaml"), "-f", str(inputs / "values.yaml")
    )
    assert result.code == 1
    assert len(result.stdout.splitlines()) == 4
    assert (inputs / "values.yaml").read_text() == before


def test_crlf_line_endings_are_kept(
    capsys: pytest.CaptureFixture[str],
    oci_registry: LocalRegistry,
    repository: str,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    pushed = push_image(oci_registry, repository_path(repository), "1.3.0")
    inputs = write_inputs(tmp_path / "in", repository)
    values = inputs / "values.yaml"
    values.write_bytes(values.read_bytes().replace(b"\n", b"\r\n"))
    assert update(capsys, "-f", str(inputs)).code == 1
    expected = expected_values(repository, "1.3.0", pushed.digest).replace("\n", "\r\n")
    assert values.read_bytes() == expected.encode()


def test_platform_and_credentials_from_the_docker_config(
    capsys: pytest.CaptureFixture[str],
    oci_registry_basic_auth: LocalRegistry,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    reg = oci_registry_basic_auth
    assert reg.username is not None and reg.password is not None
    repository = f"{reg.host}/t/images-update-auth"
    push_index(reg, repository_path(repository), "1.0.0", ("linux/amd64", "linux/arm64"))
    arm = push_index(reg, repository_path(repository), "1.1.0", ("linux/arm64",))
    push_image(reg, repository_path(repository), "1.2.0", "linux/amd64")
    inputs = write_inputs(tmp_path / "in", repository, extra="      platform: linux/arm64\n")
    denied = update(capsys, "-f", str(inputs))
    assert denied.code == 2
    assert "requires credentials and none were given" in denied.stderr

    config = tmp_path / "config.json"
    config.write_text(docker_config_json(reg.host, reg.username, reg.password))
    result = update(capsys, "-f", str(inputs), "--registry-config", str(config))
    assert result.code == 1, result.stderr
    assert (inputs / "values.yaml").read_text() == expected_values(repository, "1.1.0", arm.digest)


def test_credentials_from_a_secret_among_the_inputs(
    capsys: pytest.CaptureFixture[str],
    oci_registry_basic_auth: LocalRegistry,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    reg = oci_registry_basic_auth
    repository = f"{reg.host}/t/images-update-secret"
    push_image(reg, repository_path(repository), "1.0.1")
    inputs = write_inputs(tmp_path / "in", repository, extra="      secretRef: {name: pull}\n")
    (inputs / "secret.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: pull, namespace: ws}\n"
        "type: kubernetes.io/basic-auth\n"
        f"stringData: {{username: {reg.username}, password: wrong-password}}\n"
    )
    result = update(capsys, "-f", str(inputs))
    assert result.code == 2
    assert f"Bundle ws/app: spec.images[web]: {repository}: the registry refused" in result.stderr
    assert "wrong-password" not in result.stderr


BAD_INPUT_CASES = [
    ("unknown-bundle", 'x: 1 # {"$imagepolicy": "ws/other:web"}', "names Bundle ws/other"),
    ("unknown-image", 'x: 1 # {"$imagepolicy": "ws/app:api"}', "has no image 'api'"),
    ("bad-marker", 'x: 1 # {"$imagepolicy": "ws/app:web:size"}', "is not NAMESPACE/BUNDLE"),
]


@pytest.mark.parametrize(
    ("line", "message"), [c[1:] for c in BAD_INPUT_CASES], ids=[c[0] for c in BAD_INPUT_CASES]
)
def test_bad_markers_are_invalid_input_naming_file_and_line(
    capsys: pytest.CaptureFixture[str],
    repository: str,
    tmp_path: Path,
    line: str,
    message: str,
) -> None:
    inputs = write_inputs(tmp_path / "in", repository)
    (inputs / "more.yaml").write_text(f"a: 1\n{line}\n")
    result = update(capsys, "-f", str(inputs))
    assert result.code == 2
    assert f"{inputs / 'more.yaml'}:2: " in result.stderr and message in result.stderr


def test_an_unreachable_registry_fails_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, docker_config: Path
) -> None:
    port = closed_port()
    inputs = write_inputs(tmp_path / "in", f"127.0.0.1:{port}/t/web")
    before = (inputs / "values.yaml").read_text()
    result = update(capsys, "-f", str(inputs))
    assert result.code == 1
    assert "cannot reach registry" in result.stderr
    assert (inputs / "values.yaml").read_text() == before


def test_standard_input_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    result = update(capsys, "-f", "-")
    assert result.code == 2 and "cannot write back to standard input" in result.stderr


# The values file of the directory given with -f is a link: (id, its target, whether the target
# is inside the directory, the refusal or None when the target is updated).
LINK_CASES = [
    ("link-out-of-the-directory", "../outside/values.yaml", False, "a symbolic link out of"),
    ("absolute-link-out", "{outside}/values.yaml", False, "a symbolic link out of"),
    ("link-inside-the-directory", "real/values.yaml", True, None),
]


@pytest.mark.parametrize(
    ("target", "inside", "message"),
    [c[1:] for c in LINK_CASES],
    ids=[c[0] for c in LINK_CASES],
)
def test_links_out_of_the_directory_are_refused_before_anything_is_written(
    capsys: pytest.CaptureFixture[str],
    oci_registry: LocalRegistry,
    repository: str,
    tmp_path: Path,
    docker_config: Path,
    target: str,
    inside: bool,
    message: str | None,
) -> None:
    pushed = push_image(oci_registry, repository_path(repository), "1.4.0")
    inputs = write_inputs(tmp_path / "in", repository)
    outside = tmp_path / "outside"
    outside.mkdir()
    original = (inputs / "values.yaml").read_text()
    real = (inputs / target) if inside else outside / "values.yaml"
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text(original)
    (inputs / "values.yaml").unlink()
    (inputs / "values.yaml").symlink_to(target.format(outside=outside))

    result = update(capsys, "-f", str(inputs))

    if message is None:
        assert result.code == 1, result.stderr
        assert real.read_text() == expected_values(repository, "1.4.0", pushed.digest)
        assert (inputs / "values.yaml").is_symlink()  # the link stays, its target changed
    else:
        assert result.code == 2
        assert result.stderr.startswith(f"error: {inputs / 'values.yaml'}: {message}")
        assert real.read_text() == original


def test_files_are_replaced_whole_never_written_through_a_hard_link(
    capsys: pytest.CaptureFixture[str],
    oci_registry: LocalRegistry,
    repository: str,
    tmp_path: Path,
    docker_config: Path,
) -> None:
    pushed = push_image(oci_registry, repository_path(repository), "1.6.0")
    inputs = write_inputs(tmp_path / "in", repository)
    values = inputs / "values.yaml"
    values.chmod(0o640)
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.hardlink_to(values)  # the same inode outside the directory
    original = values.read_text()

    assert update(capsys, "-f", str(inputs)).code == 1

    assert values.read_text() == expected_values(repository, "1.6.0", pushed.digest)
    assert elsewhere.read_text() == original  # a temporary file renamed over the name
    assert oct(values.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in inputs.iterdir()) == ["bundle.yaml", "values.yaml"]


def test_a_hostile_tag_list_never_reaches_the_values_file(
    capsys: pytest.CaptureFixture[str], hostile: HostileServer, tmp_path: Path
) -> None:
    def registry(path: str, out: Out) -> None:
        tags = ["1.0.0", "evil:\ttrue"]  # the highest, alphabetically
        whole(out, json.dumps({"name": "t/web", "tags": tags}).encode())

    hostile.answer = registry
    repository = f"{hostile.host}/t/web"
    inputs = write_inputs(tmp_path / "in", repository)
    bundle = inputs / "bundle.yaml"
    bundle.write_text(
        bundle.read_text().replace('semver:\n          range: "^1"', "alphabetical: {}")
    )
    before = (inputs / "values.yaml").read_text()

    result = update(capsys, "-f", str(inputs))

    assert result.code == 1  # the registry's fault: a failure, not invalid input
    assert "1 tag(s) that are not OCI tags (first: 'evil:\\ttrue')" in result.stderr
    assert (inputs / "values.yaml").read_text() == before
