"""A directory of manifests as Flux's artifact tarball, and such a tarball unpacked into one.

Packing is reproducible, as `flux push artifact` packs (fluxcd/pkg tar): the same directory gives
the same bytes, hence the same digest and no new revision for Flux. Entries are the directories
and regular files under DIR, sorted by path, relative to it, with modification time 0, owner
root:root without names, mode 0755 for directories and 0644 for files (0755 when executable); the
gzip header has no time and no file name. What Flux's CLI leaves out by default is left out too
(sourceignore's ExcludeVCS and ExcludeExt): `.git/`, `.gitignore`, `.gitmodules`,
`.gitattributes`, and images and archives by extension.

A symbolic link is packed as the file it points to when that file is inside DIR; a link leaving
DIR, a dangling one, one to a directory (which could loop), and sockets, FIFOs and devices are
refused, naming the entry. The files together may hold at most MAX_ARTIFACT_BYTES (100 MiB, the
most fluxcd/pkg tar's Untar unpacks by default), checked from their sizes before any is read.

Unpacking reads an artifact from an untrusted registry: as a stream, stopping at the same cap once
decompressed, accepting only directories and regular files at relative paths without `..`, into a
temporary directory beside the destination renamed into place at the end (all or nothing).
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import untar
from bundler.oci.limits import MiB, size_text

MAX_ARTIFACT_BYTES = 100 * MiB
FIXED_MTIME = 0
# fluxcd/pkg sourceignore: ExcludeVCS, then ExcludeExt, the defaults of `flux push artifact`.
IGNORED_DIRECTORIES = frozenset({".git"})
IGNORED_FILES = frozenset({".gitignore", ".gitmodules", ".gitattributes"})
IGNORED_PATTERNS = ("*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip")
_EXECUTABLE = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


@dataclass(frozen=True)
class ArtifactArchive:
    """The gzipped tarball of a directory, with what is needed to describe it."""

    data: bytes = field(repr=False)
    # sha256 of the uncompressed tar: the config's rootfs diff_id.
    diff_id: str
    files: int

    @property
    def digest(self) -> str:
        return f"sha256:{hashlib.sha256(self.data).hexdigest()}"


@dataclass(frozen=True)
class _Entry:
    relative: str
    path: Path
    is_dir: bool
    executable: bool = False


def _ignored(name: str, *, is_dir: bool) -> bool:
    if is_dir:
        return name in IGNORED_DIRECTORIES
    return name in IGNORED_FILES or any(fnmatch.fnmatchcase(name, p) for p in IGNORED_PATTERNS)


def _followed(path: Path, root: Path, relative: str) -> Path:
    """The file a symbolic link at `path` stands for, refused unless it is a file inside `root`."""
    where = str(root)
    target = path.resolve()
    if not target.is_relative_to(root):
        raise InvalidInputError(
            f"{relative} is a symbolic link leaving the directory (to {target}): not packed",
            obj=where,
        )
    if not target.exists():
        raise InvalidInputError(f"{relative} is a dangling symbolic link", obj=where)
    if not target.is_file():
        raise InvalidInputError(
            f"{relative} is a symbolic link to something that is not a regular file: only links "
            "to files inside the directory are packed (as the file)",
            obj=where,
        )
    return target


def _entries(root: Path) -> list[_Entry]:
    """Every directory and file to pack, sorted by relative path, within the size cap."""
    entries: list[_Entry] = []
    total = 0
    pending = [root]
    while pending:
        directory = pending.pop()
        for child in sorted(directory.iterdir()):
            relative = child.relative_to(root).as_posix()
            mode = child.lstat().st_mode
            if stat.S_ISDIR(mode):
                if not _ignored(child.name, is_dir=True):
                    entries.append(_Entry(relative, child, is_dir=True))
                    pending.append(child)
                continue
            if _ignored(child.name, is_dir=False):
                continue
            if stat.S_ISLNK(mode):
                source = _followed(child, root, relative)
            elif stat.S_ISREG(mode):
                source = child
            else:
                raise InvalidInputError(
                    f"{relative} is not a regular file, directory or symbolic link", obj=str(root)
                )
            info = source.stat()
            total += info.st_size
            if total > MAX_ARTIFACT_BYTES:
                raise InvalidInputError(
                    f"the files are over the {size_text(MAX_ARTIFACT_BYTES)} cap of an artifact "
                    f"(Flux unpacks no more) at {relative}",
                    obj=str(root),
                )
            entries.append(_Entry(relative, source, False, bool(info.st_mode & _EXECUTABLE)))
    return sorted(entries, key=lambda entry: entry.relative)


def _tar_info(entry: _Entry, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(entry.relative)
    info.type = tarfile.DIRTYPE if entry.is_dir else tarfile.REGTYPE
    info.size = size
    info.mtime = FIXED_MTIME
    info.mode = 0o755 if entry.is_dir or entry.executable else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def pack(directory: Path) -> ArtifactArchive:
    """The reproducible gzipped tarball of `directory`; InvalidInputError naming what is refused."""
    if not directory.is_dir():
        raise InvalidInputError("no such directory", obj=str(directory))
    root = directory.resolve()
    entries = _entries(root)
    if not any(not entry.is_dir for entry in entries):
        raise InvalidInputError("the directory holds no file to pack", obj=str(directory))
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            content = b"" if entry.is_dir else entry.path.read_bytes()
            tar.addfile(_tar_info(entry, len(content)), io.BytesIO(content))
    raw = tar_bytes.getvalue()
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=FIXED_MTIME) as gz:
        gz.write(raw)
    return ArtifactArchive(
        data=compressed.getvalue(),
        diff_id=f"sha256:{hashlib.sha256(raw).hexdigest()}",
        files=sum(1 for entry in entries if not entry.is_dir),
    )


def _checked_path(member: tarfile.TarInfo, source: str) -> PurePosixPath:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or "\\" in member.name:
        raise RegistryAnswerError(
            f"entry {member.name!r} would be written outside the destination", obj=source
        )
    return path


def extract(archive: bytes, destination: Path, *, source: str) -> int:
    """Unpack a pulled artifact into `destination` (absent, or an empty directory): all of it or
    nothing; the number of files written."""
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise InvalidInputError(
            f"{destination} exists and is not an empty directory", obj=source, field="--output"
        )
    parent = destination.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{destination.name}.partial-", dir=parent))
    files = 0
    try:
        with untar.open_capped(
            archive,
            source,
            error=RegistryAnswerError,
            cap=MAX_ARTIFACT_BYTES,
            what="the artifact",
        ) as tar:
            for member in tar:
                path = _checked_path(member, source)
                if member.isdir():
                    (scratch / path).mkdir(parents=True, exist_ok=True)
                elif member.isreg():
                    untar.write_file(tar, member, scratch / path, source)
                    files += 1
                else:
                    raise RegistryAnswerError(
                        f"entry {member.name!r} is a {untar.entry_kind(member)}: an artifact is "
                        "unpacked only as files and directories",
                        obj=source,
                    )
        if destination.exists():
            destination.rmdir()
        os.chmod(scratch, 0o755)
        scratch.rename(destination)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return files
