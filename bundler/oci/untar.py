"""Chart archives from untrusted sources: read as a stream within a cap, unpacked all or nothing.

A `.tgz` of a few megabytes can decompress to gigabytes, so an archive is never read whole: it is
decompressed as a stream and reading stops once MAX_CHART_BYTES (100 MiB, Helm's
`MaxDecompressedChartSize`) have come out of gzip, whether the caller wants one Chart.yaml or the
whole chart.

`extract` accepts exactly what a chart is made of, regular files and directories under
`NAME/`, and refuses anything else before writing it: absolute paths, `..`, symbolic and hard
links, devices and FIFOs. It unpacks into a temporary directory beside the target and renames it
into place at the end, so a failure (a refused entry, the cap, a full disk) leaves nothing behind.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci.limits import MAX_CHART_BYTES, size_text

COPY_BYTES = 64 * 1024
_BROKEN = (tarfile.TarError, OSError, EOFError, zlib.error)


class _CappedReader(io.RawIOBase):
    """The bytes of `inner`, failing once more than `cap` of them have been read."""

    def __init__(self, inner: gzip.GzipFile, cap: int, error: InvalidInputError) -> None:
        self._inner = inner
        self._left = cap
        self._error = error

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(min(len(buffer), self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise self._error
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def open_capped(
    data: bytes,
    source: str,
    *,
    error: type[InvalidInputError] = InvalidInputError,
    cap: int = MAX_CHART_BYTES,
    what: str = "the chart archive",
) -> Iterator[tarfile.TarFile]:
    """`data` as a tar stream of at most `cap` bytes decompressed; `error` is raised (naming
    `source`) for a corrupt archive or one over the cap."""
    over = error(f"{what} is over the {size_text(cap)} cap once decompressed", obj=source)
    reader = io.BufferedReader(_CappedReader(gzip.GzipFile(fileobj=io.BytesIO(data)), cap, over))
    try:
        with tarfile.open(fileobj=reader, mode="r|") as tar:
            yield tar
    except _BROKEN as err:
        raise error(f"not a gzipped tar archive, or a corrupt one ({err})", obj=source) from None


def extract(archive: bytes, chart_name: str, dest: Path, *, source: str) -> Path:
    """Unpack a pulled chart archive as `dest/chart_name`: all of it, or nothing."""
    target = dest / chart_name
    if target.exists():
        raise InvalidInputError(f"cannot untar: {target} already exists", obj=source)
    dest.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{chart_name}.partial-", dir=dest))
    try:
        with open_capped(archive, source, error=RegistryAnswerError) as tar:
            for member in tar:
                _unpack(tar, member, chart_name, scratch, source)
        unpacked = scratch / chart_name
        if not unpacked.is_dir():
            raise RegistryAnswerError(f"the archive holds nothing under {chart_name}/", obj=source)
        unpacked.rename(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _unpack(
    tar: tarfile.TarFile, member: tarfile.TarInfo, chart_name: str, root: Path, source: str
) -> None:
    path = _checked_path(member, chart_name, source)
    if member.isdir():
        (root / path).mkdir(parents=True, exist_ok=True)
        return
    if not member.isreg():
        raise RegistryAnswerError(
            f"entry {member.name!r} is a {entry_kind(member)}: a chart holds only files and "
            "directories",
            obj=source,
        )
    write_file(tar, member, root / path, source)


def write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, written: Path, source: str) -> None:
    """Write the regular file `member` at `written`, which must not exist yet (a repeated entry
    is refused), mode 0644 (0755 when the entry is executable)."""
    written.parent.mkdir(parents=True, exist_ok=True)
    content = tar.extractfile(member)
    try:
        with written.open("xb") as out:
            if content is not None:
                shutil.copyfileobj(content, out, COPY_BYTES)
    except FileExistsError:
        raise RegistryAnswerError(f"entry {member.name!r} is repeated", obj=source) from None
    executable = member.mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.chmod(written, 0o755 if executable else 0o644)


def _checked_path(member: tarfile.TarInfo, chart_name: str, source: str) -> PurePosixPath:
    path = PurePosixPath(member.name.removeprefix("./"))
    if path.is_absolute() or ".." in path.parts or "\\" in member.name:
        raise RegistryAnswerError(
            f"entry {member.name!r} would be written outside {chart_name}/", obj=source
        )
    if not path.parts or path.parts[0] != chart_name:
        raise RegistryAnswerError(f"entry {member.name!r} is outside {chart_name}/", obj=source)
    return path


def entry_kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return f"symbolic link to {member.linkname!r}"
    if member.islnk():
        return f"hard link to {member.linkname!r}"
    if member.isdev():
        return "device or FIFO"
    return "special entry"
