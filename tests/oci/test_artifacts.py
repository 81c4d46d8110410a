"""`bundler artifact push|pull|versions` against a real registry (docker-registry on 127.0.0.1)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from bundler.errors import BundlerError
from bundler.oci import artifact_layout, artifacts, layout
from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions
from tests.support.cli_helpers import output_field
from tests.support.oci.artifact_fixtures import RunArtifactCli, TarEntry, tarball
from tests.support.oci.hostile_server import HostileServer, Out, head, hostile, whole
from tests.support.registry_fixtures import LocalRegistry
from tests.support.registry_images import get_blob, get_manifest, push_artifact

__all__ = ["hostile"]

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  greeting: {text}\n"


def _manifests(root: Path, text: str = "hello") -> Path:
    (root / "app").mkdir(parents=True, exist_ok=True)
    (root / "kustomization.yaml").write_text("resources: [app/configmap.yaml]\n")
    (root / "app" / "configmap.yaml").write_text(CONFIGMAP.format(text=text))
    return root


def test_push_writes_fluxs_layout_with_the_origin_annotations(
    oci_registry: LocalRegistry,
    run_artifact_cli: RunArtifactCli,
    repo_path: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    result = run_artifact_cli(
        "push",
        str(_manifests(tmp_path / "dir")),
        f"{oci_registry.oci(repo_path)}:1.0.0",
        "--source",
        "https://git.example/app.git",
        "--revision",
        "main@sha1:0123abcd",
    )
    assert result.code == 0, result.stderr
    assert output_field(result.stdout, "Pushed") == f"{oci_registry.oci(repo_path)}:1.0.0"
    assert output_field(result.stdout, "Files") == "2"
    response = get_manifest(oci_registry, repo_path, "1.0.0")
    assert output_field(result.stdout, "Digest") == response.headers["Docker-Content-Digest"]
    manifest = response.json()
    assert manifest["mediaType"] == layout.MANIFEST_MEDIA_TYPE
    assert manifest["config"]["mediaType"] == "application/vnd.cncf.flux.config.v1+json"
    assert [layer["mediaType"] for layer in manifest["layers"]] == [
        "application/vnd.cncf.flux.content.v1.tar+gzip"
    ]
    assert manifest["annotations"] == {
        "org.opencontainers.image.created": "2023-11-14T22:13:20Z",
        "org.opencontainers.image.revision": "main@sha1:0123abcd",
        "org.opencontainers.image.source": "https://git.example/app.git",
    }
    config = json.loads(get_blob(oci_registry, repo_path, manifest["config"]["digest"]))
    assert config["created"] == "2023-11-14T22:13:20Z"
    assert config["rootfs"]["diff_ids"][0].startswith("sha256:")


def test_the_same_directory_pushed_again_is_the_same_manifest(
    oci_registry: LocalRegistry, run_artifact_cli: RunArtifactCli, repo_path: str, tmp_path: Path
) -> None:
    remote = f"{oci_registry.oci(repo_path)}:v1"
    digests = []
    for copy in ("one", "two"):
        result = run_artifact_cli("push", str(_manifests(tmp_path / copy)), remote)
        assert result.code == 0, result.stderr
        digests.append(output_field(result.stdout, "Digest"))
    assert digests[0] == digests[1]
    assert "annotations" not in get_manifest(oci_registry, repo_path, "v1").json()


def test_a_different_artifact_under_a_taken_tag_needs_force(
    oci_registry: LocalRegistry, run_artifact_cli: RunArtifactCli, repo_path: str, tmp_path: Path
) -> None:
    remote = f"{oci_registry.oci(repo_path)}:latest"
    assert run_artifact_cli("push", str(_manifests(tmp_path / "a", "one")), remote).code == 0
    changed = str(_manifests(tmp_path / "b", "two"))
    refused = run_artifact_cli("push", changed, remote)
    assert refused.code == 1
    assert "already holds a different artifact" in refused.stderr
    assert "--force" in refused.stderr
    forced = run_artifact_cli("push", changed, remote, "--force")
    assert forced.code == 0, forced.stderr
    assert "warning:" in forced.stderr and "replaced a different artifact" in forced.stderr


def test_pull_writes_the_files_and_reports_the_origin(
    oci_registry: LocalRegistry, run_artifact_cli: RunArtifactCli, repo_path: str, tmp_path: Path
) -> None:
    remote = f"{oci_registry.oci(repo_path)}:2.0.0"
    pushed = run_artifact_cli(
        "push", str(_manifests(tmp_path / "dir")), remote, "--revision", "v2@sha1:feed"
    )
    assert pushed.code == 0, pushed.stderr
    out = tmp_path / "pulled"
    result = run_artifact_cli("pull", remote, "--output", str(out))
    assert result.code == 0, result.stderr
    assert output_field(result.stdout, "Digest") == output_field(pushed.stdout, "Digest")
    assert output_field(result.stdout, "Revision") == "v2@sha1:feed"
    assert (out / "app" / "configmap.yaml").read_text() == CONFIGMAP.format(text="hello")
    assert (out / "kustomization.yaml").is_file()


def test_versions_and_pull_by_range_use_the_semver_tags(
    oci_registry: LocalRegistry, run_artifact_cli: RunArtifactCli, repo_path: str, tmp_path: Path
) -> None:
    repository = oci_registry.oci(repo_path)
    for tag in ("1.0.0", "1.1.0", "2.0.0-rc.1", "latest"):
        source = _manifests(tmp_path / tag, tag)
        assert run_artifact_cli("push", str(source), f"{repository}:{tag}").code == 0
    listed = run_artifact_cli("versions", repository)
    assert listed.code == 0, listed.stderr
    assert listed.stdout.split() == ["2.0.0-rc.1", "1.1.0", "1.0.0"]
    cases = {None: "1.1.0", "~1.0": "1.0.0", ">=2.0.0-0": "2.0.0-rc.1"}
    assert cases
    for version, expected in cases.items():
        out = tmp_path / f"pulled-{version}"
        flags = [] if version is None else ["--version", version]
        result = run_artifact_cli("pull", repository, "--output", str(out), *flags)
        assert result.code == 0, result.stderr
        assert output_field(result.stdout, "Pulled") == f"{repository}:{expected}"
        assert f"greeting: {expected}" in (out / "app" / "configmap.yaml").read_text()


@pytest.mark.parametrize(
    ("layer", "layer_type", "message"),
    [
        pytest.param(
            tarball([TarEntry("../escape.yaml", b"x")]),
            artifact_layout.CONTENT_MEDIA_TYPE,
            "outside the destination",
            id="traversal",
        ),
        pytest.param(
            tarball([TarEntry("etc", kind=tarfile.SYMTYPE, link="/etc")]),
            artifact_layout.CONTENT_MEDIA_TYPE,
            "symbolic link",
            id="symlink",
        ),
        pytest.param(
            b"a chart", layout.CHART_LAYER_MEDIA_TYPE, "not a Flux artifact", id="not-an-artifact"
        ),
    ],
)
def test_pull_refuses_hostile_or_foreign_artifacts_and_writes_nothing(
    oci_registry: LocalRegistry,
    run_artifact_cli: RunArtifactCli,
    repo_path: str,
    tmp_path: Path,
    layer: bytes,
    layer_type: str,
    message: str,
) -> None:
    push_artifact(
        oci_registry,
        repo_path,
        "bad",
        config_type=artifact_layout.CONFIG_MEDIA_TYPE,
        layer_type=layer_type,
        layer=layer,
    )
    out = tmp_path / "out"
    result = run_artifact_cli("pull", f"{oci_registry.oci(repo_path)}:bad", "--output", str(out))
    assert result.code == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    assert not (tmp_path / "escape.yaml").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["push", "{dir}", "{repo}"], "must name a tag", id="push-without-tag"),
        pytest.param(["push", "{missing}", "{repo}:v1"], "no such directory", id="no-directory"),
        pytest.param(["push", "{dir}", "{repo}:bad@tag"], "invalid tag", id="bad-tag"),
        pytest.param(
            ["pull", "{repo}:v1", "--version", "1.0.0", "--output", "{out}"],
            "not both",
            id="tag-and-version",
        ),
        pytest.param(
            ["pull", "{repo}", "--version", "1.2.3.4.5", "--output", "{out}"],
            "--version",
            id="bad-range",
        ),
        pytest.param(
            ["push", "{dir}", "{repo}:v1", "--password-stdin"], "needs --username", id="password"
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    oci_registry: LocalRegistry,
    run_artifact_cli: RunArtifactCli,
    repo_path: str,
    tmp_path: Path,
    argv: list[str],
    message: str,
) -> None:
    values = {
        "dir": str(_manifests(tmp_path / "dir")),
        "missing": str(tmp_path / "missing"),
        "repo": oci_registry.oci(repo_path),
        "out": str(tmp_path / "out"),
    }
    result = run_artifact_cli(*(arg.format(**values) for arg in argv))
    assert result.code == 2, result
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_pull_of_a_missing_tag_fails_naming_it(
    oci_registry: LocalRegistry, run_artifact_cli: RunArtifactCli, repo_path: str, tmp_path: Path
) -> None:
    remote = f"{oci_registry.oci(repo_path)}:nope"
    result = run_artifact_cli("pull", remote, "--output", str(tmp_path / "out"))
    assert result.code != 0
    assert remote in result.stderr
    assert "Traceback" not in result.stderr


def _hostile_artifact(layer_size: int) -> bytes:
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": layout.MANIFEST_MEDIA_TYPE,
            "config": {
                "mediaType": artifact_layout.CONFIG_MEDIA_TYPE,
                "digest": "sha256:" + "b" * 64,
                "size": 2,
            },
            "layers": [
                {
                    "mediaType": artifact_layout.CONTENT_MEDIA_TYPE,
                    "digest": "sha256:" + "a" * 64,
                    "size": layer_size,
                }
            ],
        }
    ).encode()


@pytest.mark.parametrize(
    ("layer_size", "message", "blob_asked"),
    [
        pytest.param(
            3 << 30,
            "the artifact's layer is over the 100 MiB cap: its descriptor declares 3072 MiB",
            0,
            id="declared-over-the-cap-never-downloaded",
        ),
        pytest.param(
            1 << 20,
            "registry {host} did not finish sending the artifact's layer within the 2s deadline of "
            "this operation",
            1,
            id="a-layer-that-never-ends-stops-at-the-deadline",
        ),
    ],
)
def test_pull_is_bounded_in_size_and_time(
    hostile: HostileServer, layer_size: int, message: str, blob_asked: int
) -> None:
    asked: list[str] = []

    def answer(path: str, out: Out) -> None:
        if "/blobs/" in path:
            asked.append(path)
            head(out, Content_Length=str(layer_size))
            hostile.drip(out)
        elif "/manifests/" in path:
            whole(out, _hostile_artifact(layer_size))
        else:
            head(out, 404, Content_Length="0")

    hostile.answer = answer
    tag = parse_repository(f"oci://{hostile.host}/deploy/demo").tagged("v1")
    options = RegistryOptions(plain_http=True, timeout=5.0, deadline=2.0)
    with pytest.raises(BundlerError) as raised:
        artifacts.pull_artifact(tag, options)
    assert str(raised.value) == f"{tag.url}: {message.format(host=hostile.host)}"
    assert len(asked) == blob_asked
