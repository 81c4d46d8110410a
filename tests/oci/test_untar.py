"""Pulled chart archives: unpacked all or nothing, tar tricks refused before anything is written,
and decompression capped at 100 MiB however small the archive."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import package, untar
from bundler.oci.limits import MAX_CHART_BYTES
from tests.support.oci.chart_fixtures import MakeChart

CHART_YAML = b"apiVersion: v2\nname: demo\nversion: 1.0.0\n"


Entry = tuple[str, bytes, bytes, str]


def _entry(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = "") -> Entry:
    return (name, kind, data, link)


def _tgz(*entries: Entry) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, kind, data, link in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = link
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return buffer.getvalue()


GOOD = _entry("demo/Chart.yaml", data=CHART_YAML)

TRICKS: list[tuple[str, Entry, str]] = [
    ("absolute-path", _entry("/tmp/evil", data=b"x"), "would be written outside demo/"),
    ("dot-dot", _entry("demo/../../evil", data=b"x"), "would be written outside demo/"),
    ("other-top", _entry("other/file", data=b"x"), "is outside demo/"),
    (
        "symlink-out",
        _entry("demo/link", tarfile.SYMTYPE, link="/etc/passwd"),
        "is a symbolic link to '/etc/passwd'",
    ),
    (
        "symlink-inside",
        _entry("demo/link", tarfile.SYMTYPE, link="Chart.yaml"),
        "is a symbolic link to 'Chart.yaml'",
    ),
    (
        "hardlink-out",
        _entry("demo/hard", tarfile.LNKTYPE, link="/etc/passwd"),
        "is a hard link to '/etc/passwd'",
    ),
    ("char-device", _entry("demo/dev", tarfile.CHRTYPE), "is a device or FIFO"),
    ("fifo", _entry("demo/pipe", tarfile.FIFOTYPE), "is a device or FIFO"),
    ("repeated", GOOD, "entry 'demo/Chart.yaml' is repeated"),
]


@pytest.mark.parametrize(("trick", "message"), [c[1:] for c in TRICKS], ids=[c[0] for c in TRICKS])
def test_tar_tricks_are_refused_and_leave_nothing(
    tmp_path: Path, trick: Entry, message: str
) -> None:
    archive = _tgz(GOOD, _entry("demo/values.yaml", data=b"a: 1\n"), trick)
    with pytest.raises(RegistryAnswerError, match=message):
        untar.extract(archive, "demo", tmp_path / "out", source="oci://r/c:1")
    assert list((tmp_path / "out").iterdir()) == []
    assert not Path("/tmp/evil").exists()


def _bomb(size: int) -> bytes:
    """A chart whose templates/big.yaml holds `size` zero bytes (compressed ~1000 times)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w|") as tar:
        chart = tarfile.TarInfo("demo/Chart.yaml")
        chart.size = len(CHART_YAML)
        tar.addfile(chart, io.BytesIO(CHART_YAML))
        big = tarfile.TarInfo("demo/templates/big.yaml")
        big.size = size
        tar.addfile(big, io.BytesIO(bytes(size)))
    return gzip.compress(raw.getvalue(), compresslevel=1)


def test_a_decompression_bomb_is_cut_at_the_cap_and_leaves_nothing(tmp_path: Path) -> None:
    bomb = _bomb(MAX_CHART_BYTES)
    assert len(bomb) < MAX_CHART_BYTES // 100
    with pytest.raises(RegistryAnswerError, match="over the 100 MiB cap once decompressed"):
        untar.extract(bomb, "demo", tmp_path / "out", source="oci://r/c:1")
    assert list((tmp_path / "out").iterdir()) == []


def test_chart_yaml_behind_a_bomb_is_never_reached(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w|") as tar:
        big = tarfile.TarInfo("demo/templates/big.yaml")
        big.size = MAX_CHART_BYTES
        tar.addfile(big, io.BytesIO(bytes(MAX_CHART_BYTES)))
        chart = tarfile.TarInfo("demo/Chart.yaml")
        chart.size = len(CHART_YAML)
        tar.addfile(chart, io.BytesIO(CHART_YAML))
    bomb = gzip.compress(raw.getvalue(), compresslevel=1)
    with pytest.raises(RegistryAnswerError, match="over the 100 MiB cap once decompressed"):
        package.read_chart_yaml(bomb, source="oci://r/c:1")


def test_a_chart_unpacks_with_its_modes(make_chart: MakeChart, tmp_path: Path) -> None:
    chart_dir = make_chart(files={"run.sh": "#!/bin/sh\n"})
    (chart_dir / "run.sh").chmod(0o755)
    out = tmp_path / "out"
    target = untar.extract(package.build_archive(chart_dir).data, "demo", out, source="x")
    assert (target / "Chart.yaml").stat().st_mode & 0o777 == 0o644
    assert (target / "run.sh").stat().st_mode & 0o777 == 0o755
    assert [p.name for p in out.iterdir()] == ["demo"]


def test_extract_refuses_paths_outside_the_chart(tmp_path: Path) -> None:
    data = _tgz(_entry("demo/Chart.yaml", data=b"name: demo"), _entry("../evil", data=b"x"))
    with pytest.raises(RegistryAnswerError, match="outside demo/"):
        untar.extract(data, "demo", tmp_path, source="x")
    assert not (tmp_path.parent / "evil").exists()


def test_extract_refuses_to_overwrite(make_chart: MakeChart, tmp_path: Path) -> None:
    archive = package.build_archive(make_chart())
    (tmp_path / "demo").mkdir()
    with pytest.raises(InvalidInputError, match="already exists"):
        untar.extract(archive.data, "demo", tmp_path, source="x")


def test_extract_unpacks_under_the_chart_name(make_chart: MakeChart, tmp_path: Path) -> None:
    archive = package.build_archive(make_chart())
    target = untar.extract(archive.data, "demo", tmp_path / "out", source="x")
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*.yaml")) == [
        "Chart.yaml",
        "templates/configmap.yaml",
        "values.yaml",
    ]
