"""Chart.yaml validation and deterministic packaging."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from bundler.errors import InvalidInputError
from bundler.oci import chart, package
from tests.oci.conftest import MakeChart

VALID = "apiVersion: v2\nname: demo\nversion: 1.0.0\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list", "must be a YAML mapping"),
        ("name: demo\nversion: 1.0.0\n", "apiVersion: is required"),
        ("apiVersion: v1\nname: demo\nversion: 1.0.0\n", "apiVersion: must be 'v2'"),
        ("apiVersion: v2\nversion: 1.0.0\n", "name: is required"),
        (
            "apiVersion: v2\nname: My_Chart\nversion: 1.0.0\n",
            "name: 'My_Chart' is not a valid chart name",
        ),
        ("apiVersion: v2\nname: demo\n", "version: is required"),
        (
            "apiVersion: v2\nname: demo\nversion: 1.0\n",
            "version: must be a string, got float 1.0 \\(quote it\\)",
        ),
        (
            "apiVersion: v2\nname: demo\nversion: '1.0'\n",
            "version: '1.0' is not a SemVer 2 version",
        ),
        (
            "apiVersion: v2\nname: demo\nversion: v1.0.0\n",
            "version: 'v1.0.0' is not a SemVer 2 version",
        ),
        ("apiVersion: v2\nname: demo\nversion: 1.0.0-01\n", "is not a SemVer 2 version"),
        (VALID + "type: plugin\n", "type: must be one of application, library, got 'plugin'"),
        ("apiVersion: [v2\n", "malformed YAML"),
    ],
    ids=[
        "not-a-mapping",
        "no-api-version",
        "helm2-api-version",
        "no-name",
        "bad-name",
        "no-version",
        "float-version",
        "partial-version",
        "v-prefix",
        "leading-zero-prerelease",
        "bad-type",
        "bad-yaml",
    ],
)
def test_invalid_chart_yaml_names_file_field_and_cause(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        chart.parse(text, source="demo/Chart.yaml")
    assert str(caught.value).startswith("demo/Chart.yaml")


@pytest.mark.parametrize(
    "version", ["1.0.0", "0.1.0-rc.1", "1.2.3+build.7", "1.2.3-alpha.1+sha.abc"], ids=str
)
def test_valid_versions(version: str) -> None:
    assert (
        chart.parse(f"apiVersion: v2\nname: demo\nversion: {version}\n", source="x").version
        == version
    )


def test_config_json_is_compact_and_sorted() -> None:
    metadata = chart.parse("version: 1.0.0\nname: demo\napiVersion: v2\n", source="x")
    assert metadata.config_json() == b'{"apiVersion":"v2","name":"demo","version":"1.0.0"}'


def _entries(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getmembers()


def test_archive_layout_is_fixed(make_chart: MakeChart) -> None:
    root = make_chart("demo", "1.0.0", files={"scripts/run.sh": "#!/bin/sh\n"})
    os.chmod(root / "scripts/run.sh", 0o755)
    archive = package.build_archive(root)
    entries = _entries(archive.data)
    assert [e.name for e in entries] == [
        "demo/Chart.yaml",
        "demo/scripts/run.sh",
        "demo/templates/configmap.yaml",
        "demo/values.yaml",
    ]
    assert {(e.mtime, e.uid, e.gid, e.uname, e.gname) for e in entries} == {(0, 0, 0, "", "")}
    assert [oct(e.mode) for e in entries] == ["0o644", "0o755", "0o644", "0o644"]
    assert all(e.isfile() for e in entries)
    # gzip header: no timestamp (bytes 4-8) and no file name flag.
    assert archive.data[4:8] == b"\0\0\0\0" and archive.data[3] & 0x08 == 0
    assert gzip.decompress(archive.data)


def test_same_directory_gives_same_digest(make_chart: MakeChart, tmp_path: Path) -> None:
    root = make_chart()
    first = package.build_archive(root)
    os.utime(root / "values.yaml", (1, 1))
    (root / "templates").touch()
    second = package.build_archive(root)
    copy = make_chart(parent=tmp_path / "elsewhere")
    assert first.digest == second.digest == package.build_archive(copy).digest


def test_content_change_changes_digest(make_chart: MakeChart) -> None:
    root = make_chart()
    before = package.build_archive(root).digest
    (root / "values.yaml").write_text("greeting: bonjour\n")
    assert package.build_archive(root).digest != before


def test_package_writes_name_version_tgz(make_chart: MakeChart, tmp_path: Path) -> None:
    target, archive = package.package(make_chart("demo", "1.2.3+b.1"), tmp_path / "out")
    assert target == tmp_path / "out" / "demo-1.2.3+b.1.tgz"
    assert target.read_bytes() == archive.data


def test_helmignore_is_honoured(make_chart: MakeChart) -> None:
    root = make_chart(
        files={
            ".helmignore": "# build output\n*.tgz\nci/\n/NOTES.md\n",
            "old-0.9.0.tgz": "x",
            "ci/values-test.yaml": "a: 1\n",
            "NOTES.md": "top",
            "docs/NOTES.md": "kept: only the root one is anchored",
            "templates/.scratch.yaml": "hidden",
        }
    )
    names = [e.name for e in _entries(package.build_archive(root).data)]
    assert names == [
        "demo/.helmignore",
        "demo/Chart.yaml",
        "demo/docs/NOTES.md",
        "demo/templates/configmap.yaml",
        "demo/values.yaml",
    ]


def test_symlink_cycle_is_cut(make_chart: MakeChart) -> None:
    root = make_chart()
    (root / "templates" / "loop").symlink_to(root / "templates")
    names = [e.name for e in _entries(package.build_archive(root).data)]
    assert names.count("demo/templates/configmap.yaml") == 1


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({".helmignore": "Chart.yaml\n"}, ".helmignore excludes Chart.yaml"),
        ({".helmignore": "a/**/b\n"}, "double-star"),
        (
            {"Chart.yaml": "apiVersion: v2\nname: demo\nversion: one\n"},
            "version: 'one' is not a SemVer 2",
        ),
    ],
    ids=["chart-yaml-ignored", "bad-helmignore", "bad-version"],
)
def test_package_refuses_bad_charts(
    make_chart: MakeChart, files: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        package.build_archive(make_chart(files=files))


def test_package_needs_chart_yaml(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"no Chart\.yaml in this directory"):
        package.build_archive(tmp_path)


def test_load_archive_validates_and_keeps_bytes(make_chart: MakeChart) -> None:
    built = package.build_archive(make_chart("demo", "2.0.0"))
    loaded = package.load_archive(built.data, source="demo-2.0.0.tgz")
    assert (loaded.metadata.name, loaded.metadata.version, loaded.data) == (
        "demo",
        "2.0.0",
        built.data,
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"plain text", "not a gzipped tar archive"),
        (gzip.compress(b"not a tar"), "not a gzipped tar archive|corrupt archive"),
    ],
    ids=["not-gzip", "gzip-not-tar"],
)
def test_load_archive_refuses_non_archives(data: bytes, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        package.load_archive(data, source="x.tgz")


def _tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_archive_without_chart_yaml_is_not_a_chart() -> None:
    with pytest.raises(InvalidInputError, match=r"no NAME/Chart\.yaml inside"):
        package.read_chart_yaml(_tgz({"demo/values.yaml": b"a: 1"}), source="x")


def test_read_chart_yaml_is_lenient_for_pulled_charts() -> None:
    data = _tgz({"old/Chart.yaml": b"apiVersion: v1\nname: old\nversion: v0.1\n"})
    assert package.read_chart_yaml(data, source="x")["version"] == "v0.1"


@pytest.mark.parametrize("name", ["../evil", "..", "a/b", "a\\b", ""], ids=repr)
def test_pulled_chart_name_must_be_usable_as_a_file_name(name: str) -> None:
    data = _tgz({"x/Chart.yaml": f"name: {name!r}\nversion: 1.0.0\n".encode()})
    with pytest.raises(InvalidInputError, match="lacks a name or a version usable in a file name"):
        package.read_chart_yaml(data, source="x")
