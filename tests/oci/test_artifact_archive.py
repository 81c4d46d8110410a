"""Packing a directory as Flux's artifact tarball, and unpacking pulled ones, on real files."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import artifact_archive
from tests.support.oci.artifact_fixtures import TarEntry, tarball


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getmembers()


MANIFESTS = {
    "kustomization.yaml": "resources: [app/config.yaml]\n",
    "app/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\n",
}


def test_entries_are_sorted_relative_and_stripped_of_time_and_owner(tmp_path: Path) -> None:
    root = _write(tmp_path / "dir", MANIFESTS)
    (root / "app" / "config.yaml").chmod(0o600)
    members = _members(artifact_archive.pack(root).data)
    assert [m.name for m in members] == ["app", "app/config.yaml", "kustomization.yaml"]
    assert members
    for member in members:
        owner = (member.uid, member.gid, member.uname, member.gname)
        assert (member.mtime, owner) == (0, (0, 0, "", ""))
    assert [oct(m.mode) for m in members] == ["0o755", "0o644", "0o644"]


def test_the_same_directory_packs_to_the_same_bytes_wherever_and_whenever(tmp_path: Path) -> None:
    first = _write(tmp_path / "one", MANIFESTS)
    second = _write(tmp_path / "two", dict(reversed(MANIFESTS.items())))
    os.utime(second / "kustomization.yaml", (1, 1))
    assert artifact_archive.pack(first).digest == artifact_archive.pack(second).digest
    header = artifact_archive.pack(first).data[:10]
    assert header[4:8] == b"\0\0\0\0", "the gzip header carries no time"


def test_what_flux_leaves_out_is_left_out(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "dir",
        {**MANIFESTS, ".git/HEAD": "ref", ".gitignore": "x", "logo.png": "png", "a/b.zip": "z"},
    )
    names = [m.name for m in _members(artifact_archive.pack(root).data)]
    assert names == ["a", "app", "app/config.yaml", "kustomization.yaml"]


def test_a_link_to_a_file_inside_is_packed_as_that_file(tmp_path: Path) -> None:
    root = _write(tmp_path / "dir", MANIFESTS)
    (root / "alias.yaml").symlink_to("app/config.yaml")
    archive = artifact_archive.pack(root)
    with tarfile.open(fileobj=io.BytesIO(archive.data), mode="r:gz") as tar:
        alias = tar.getmember("alias.yaml")
        assert alias.isreg()
        content = tar.extractfile(alias)
        assert content is not None and content.read() == MANIFESTS["app/config.yaml"].encode()
    assert archive.files == 3


@pytest.mark.parametrize(
    ("link", "message"),
    [
        pytest.param("../outside.yaml", "leaving the directory", id="leaves-the-directory"),
        pytest.param("/etc/hostname", "leaving the directory", id="absolute-outside"),
        pytest.param("missing.yaml", "dangling", id="dangling"),
        pytest.param("app", "not a regular file", id="to-a-directory"),
    ],
)
def test_links_that_are_not_files_inside_are_refused(
    tmp_path: Path, link: str, message: str
) -> None:
    (tmp_path / "outside.yaml").write_text("secret: 1\n")
    root = _write(tmp_path / "dir", MANIFESTS)
    (root / "link.yaml").symlink_to(link)
    with pytest.raises(InvalidInputError, match=message) as caught:
        artifact_archive.pack(root)
    assert "link.yaml" in str(caught.value)


def test_a_fifo_is_refused(tmp_path: Path) -> None:
    root = _write(tmp_path / "dir", MANIFESTS)
    os.mkfifo(root / "pipe")
    with pytest.raises(InvalidInputError, match="pipe is not a regular file"):
        artifact_archive.pack(root)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        pytest.param(None, "no such directory", id="missing"),
        pytest.param({".gitignore": "x"}, "no file to pack", id="nothing-left"),
    ],
)
def test_nothing_to_pack_is_refused(
    tmp_path: Path, files: dict[str, str] | None, message: str
) -> None:
    root = tmp_path / "dir"
    if files is not None:
        _write(root, files)
    with pytest.raises(InvalidInputError, match=message):
        artifact_archive.pack(root)


def test_files_over_the_cap_are_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(artifact_archive, "MAX_ARTIFACT_BYTES", 100)
    root = _write(tmp_path / "dir", {"a.yaml": "x" * 60, "b.yaml": "y" * 60})
    with pytest.raises(InvalidInputError, match=r"over the 100 bytes cap .* at b\.yaml"):
        artifact_archive.pack(root)


def test_a_packed_directory_unpacks_to_the_same_files(tmp_path: Path) -> None:
    root = _write(tmp_path / "dir", MANIFESTS)
    out = tmp_path / "out"
    assert artifact_archive.extract(artifact_archive.pack(root).data, out, source="s") == 2
    assert {
        p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()
    } == MANIFESTS


def test_flux_style_root_entry_and_an_empty_destination_are_accepted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    data = tarball([TarEntry(".", kind=tarfile.DIRTYPE), TarEntry("a.yaml", b"a: 1\n")])
    assert artifact_archive.extract(data, out, source="s") == 1
    assert (out / "a.yaml").read_text() == "a: 1\n"


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        pytest.param([TarEntry("../evil.yaml", b"x")], "outside the destination", id="dot-dot"),
        pytest.param([TarEntry("/tmp/evil.yaml", b"x")], "outside the destination", id="absolute"),
        pytest.param(
            [TarEntry("a/../../evil.yaml", b"x")], "outside the destination", id="inner-dot-dot"
        ),
        pytest.param(
            [TarEntry("link", kind=tarfile.SYMTYPE, link="/etc")], "symbolic link", id="symlink"
        ),
        pytest.param(
            [TarEntry("a", b"x"), TarEntry("b", kind=tarfile.LNKTYPE, link="a")],
            "hard link",
            id="hardlink",
        ),
        pytest.param([TarEntry("a", b"x"), TarEntry("a", b"y")], "repeated", id="repeated"),
    ],
)
def test_hostile_entries_are_refused_and_nothing_is_written(
    tmp_path: Path, entries: list[TarEntry], message: str
) -> None:
    out = tmp_path / "deep" / "out"
    with pytest.raises(RegistryAnswerError, match=message):
        artifact_archive.extract(tarball(entries), out, source="oci://r/x:1")
    assert not out.exists()
    assert list(out.parent.iterdir()) == []
    assert not (tmp_path / "evil.yaml").exists()


def test_a_bomb_stops_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(artifact_archive, "MAX_ARTIFACT_BYTES", 64 * 1024)
    data = tarball([TarEntry("big.yaml", b"\0" * (1024 * 1024))])
    assert len(data) < 64 * 1024
    with pytest.raises(RegistryAnswerError, match="the artifact is over the 65536 bytes cap"):
        artifact_archive.extract(data, tmp_path / "out", source="s")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"not gzip", "not a gzipped tar", id="not-gzip"),
        pytest.param(gzip.compress(b"\1" * 1024), "not a gzipped tar", id="not-tar"),
    ],
)
def test_a_broken_layer_is_refused(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(RegistryAnswerError, match=message):
        artifact_archive.extract(data, tmp_path / "out", source="s")


def test_a_destination_with_files_is_refused(tmp_path: Path) -> None:
    out = _write(tmp_path / "out", {"kept.yaml": "x"})
    data = tarball([TarEntry("a.yaml", b"a")])
    with pytest.raises(InvalidInputError, match="not an empty directory"):
        artifact_archive.extract(data, out, source="s")
    assert [p.name for p in out.iterdir()] == ["kept.yaml"]
