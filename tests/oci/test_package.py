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
from tests.support.oci.chart_fixtures import MakeChart

VALID = "apiVersion: v2\nname: demo\nversion: 1.0.0\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list", "must be a YAML mapping"),
        ("name: demo\nversion: 1.0.0\n", "apiVersion: is required"),
        ("apiVersion: v3\nname: demo\nversion: 1.0.0\n", "apiVersion: must be 'v2' .* or 'v1'"),
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
        ("apiVersion: v2\nname: demo\nversion: one\n", "version: 'one' is not a SemVer version"),
        ("apiVersion: v2\nname: demo\nversion: 1.0.0-01\n", "is not a SemVer version"),
        (f"apiVersion: v2\nname: demo\nversion: 1.0.0-{'a' * 130}\n", "longer than 128"),
        (VALID + "appVersion: 1.10\n", "appVersion: must be a string, got float 1.1"),
        (VALID + "annotations: {replicas: 3}\n", "annotations.replicas: must be a string"),
        (VALID + "dependencies: [{version: 1.0.0}]\n", r"dependencies\[0\].name: is required"),
        (
            VALID + "dependencies: [{name: a}, {name: b, alias: a}]\n",
            r"dependencies\[1\]: more than one dependency with name or alias 'a'",
        ),
        (VALID + "dependencies: [{name: a, alias: a.b}]\n", r"alias: must be letters"),
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
        "not-a-version",
        "leading-zero-prerelease",
        "longer-than-a-tag",
        "number-app-version",
        "number-annotation",
        "dependency-without-name",
        "dependency-twice-by-alias",
        "bad-alias",
        "bad-type",
        "bad-yaml",
    ],
)
def test_invalid_chart_yaml_names_file_field_and_cause(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        chart.parse(text, source="demo/Chart.yaml")
    assert str(caught.value).startswith("demo/Chart.yaml")


@pytest.mark.parametrize(
    "version",
    ["1.0.0", "0.1.0-rc.1", "1.2.3+build.7", "1.2.3-alpha.1+sha.abc", "v3.28.2", "1.2", "v1"],
    ids=str,
)
def test_versions_helm_accepts(version: str) -> None:
    text = f"apiVersion: v2\nname: demo\nversion: '{version}'\n"
    assert chart.parse(text, source="x").version == version


@pytest.mark.parametrize("api_version", ["v1", "v2"])
def test_helm2_and_helm3_charts_are_accepted(api_version: str) -> None:
    text = f"apiVersion: {api_version}\nname: demo\nversion: 1.0.0\ntype: library\n"
    assert chart.parse(text, source="x").api_version == api_version


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
            "version: 'one' is not a SemVer version",
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


DEPENDS = "apiVersion: v2\nname: demo\nversion: 1.0.0\ndependencies:\n- {name: db, version: 1.x}\n"
DB_CHART = "apiVersion: v2\nname: db\nversion: 1.0.0\n"


def _subchart_tgz(name: str) -> str:
    """A packaged subchart's bytes as text (latin-1, so they survive write_text)."""
    files = {f"{name}/Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n".encode()}
    return _tgz(files).decode("latin-1")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"Chart.yaml": DEPENDS}, "found in Chart.yaml, but missing in charts/ directory: db"),
        (
            {
                "Chart.yaml": "apiVersion: v1\nname: demo\nversion: 1.0.0\n",
                "requirements.yaml": "dependencies:\n- {name: db, version: 1.x}\n",
            },
            "found in requirements.yaml, but missing in charts/ directory: db",
        ),
        (
            {"Chart.yaml": DEPENDS, "charts/db/Chart.yaml": DB_CHART, "charts/README.md": "x"},
            r"charts/README\.md: not a chart: no Chart\.yaml",
        ),
        (
            {"Chart.yaml": DEPENDS, "charts/other/Chart.yaml": DB_CHART.replace("db", "other")},
            "missing in charts/ directory: db",
        ),
    ],
    ids=["missing-subchart", "missing-v1-requirement", "file-that-is-no-chart", "other-subchart"],
)
def test_dependencies_missing_from_charts_are_refused(
    make_chart: MakeChart, files: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        package.build_archive(make_chart(files=files))
    assert "helm dependency build" in str(caught.value) or "not a chart" in str(caught.value)


@pytest.mark.parametrize(
    "files",
    [
        {"charts/db/Chart.yaml": DB_CHART},
        {"charts/database-1.0/Chart.yaml": DB_CHART},
        {"charts/db-1.0.0.tgz": _subchart_tgz("db")},
        {"charts/db/Chart.yaml": DB_CHART, "charts/_helpers/x": "", "charts/.gitkeep": ""},
        {"charts/db/Chart.yaml": DB_CHART, "charts/db-1.0.0.tgz.prov": "signature"},
    ],
    ids=["directory", "directory-of-another-name", "archive", "skipped-names", "provenance"],
)
def test_dependencies_present_in_charts_are_accepted(
    make_chart: MakeChart, files: dict[str, str]
) -> None:
    root = make_chart(files={"Chart.yaml": DEPENDS})
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("latin-1"))
    assert package.build_archive(root).metadata.name == "demo"


def test_pushed_archive_with_missing_dependency_is_refused(make_chart: MakeChart) -> None:
    root = make_chart(files={"Chart.yaml": DEPENDS, "charts/db/Chart.yaml": DB_CHART})
    built = package.build_archive(root)
    without = _tgz({"demo/Chart.yaml": DEPENDS.encode()})
    assert package.load_archive(built.data, source="demo.tgz").data == built.data
    with pytest.raises(InvalidInputError, match=r"demo\.tgz: dependencies: found in Chart\.yaml"):
        package.load_archive(without, source="demo.tgz")


@pytest.mark.parametrize(
    ("overrides", "version", "app_version"),
    [
        (chart.Overrides(version="2.0.0"), "2.0.0", "1.0"),
        (chart.Overrides(version="v2.0.0+build.1"), "v2.0.0+build.1", "1.0"),
        (chart.Overrides(app_version="2.1"), "1.0.0", "2.1"),
        (chart.Overrides(version="3.0.0", app_version="3.0.0-rc.1"), "3.0.0", "3.0.0-rc.1"),
    ],
    ids=["version", "v-version-with-build", "app-version", "both"],
)
def test_overrides_rewrite_chart_yaml(
    make_chart: MakeChart,
    tmp_path: Path,
    overrides: chart.Overrides,
    version: str,
    app_version: str,
) -> None:
    root = make_chart(files={"Chart.yaml": VALID + "appVersion: '1.0'\n# a comment\n"})
    target, archive = package.package(root, tmp_path / "out", overrides)
    assert target.name == f"demo-{version}.tgz"
    with tarfile.open(fileobj=io.BytesIO(archive.data), mode="r:gz") as tar:
        member = tar.extractfile("demo/Chart.yaml")
        assert member is not None
        written = chart.parse(member.read(), source="x")
    assert (written.version, written.document["appVersion"]) == (version, app_version)
    assert archive.metadata.document == written.document
    repacked = package.load_archive(
        package.build_archive(root).data, source="demo.tgz", overrides=overrides
    )
    assert repacked.data == archive.data


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (chart.Overrides(version="latest"), "--version: 'latest' is not a SemVer version"),
        (chart.Overrides(app_version=""), "--app-version: must not be empty"),
    ],
    ids=["bad-version", "empty-app-version"],
)
def test_bad_overrides_are_refused(
    make_chart: MakeChart, overrides: chart.Overrides, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        package.build_archive(make_chart(), overrides)
