"""Chart archives: deterministic `NAME-VERSION.tgz` packaging, and reading a chart back from one.

The same chart directory always gives the same bytes, hence the same digest: entries are the
regular files that `.helmignore` keeps, sorted by path, under `NAME/`, with a fixed modification
time, owner root:root without names, and mode 0644 (0755 when the source file is executable). The
gzip header carries no timestamp and no file name (Python's gzip writes the current time unless
told otherwise). Symbolic links are followed, as Helm does, and a link cycle is cut.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler import yamlload
from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import chart, helmignore, untar
from bundler.oci.chart import ChartMetadata
from bundler.oci.limits import MAX_CHART_YAML_BYTES, size_text

FIXED_MTIME = 0


@dataclass(frozen=True)
class ChartArchive:
    """The bytes of a chart `.tgz` and the metadata read from it."""

    metadata: ChartMetadata
    data: bytes

    @property
    def digest(self) -> str:
        return f"sha256:{hashlib.sha256(self.data).hexdigest()}"

    @property
    def filename(self) -> str:
        return f"{self.metadata.name}-{self.metadata.version}.tgz"


def _ignore_rules(chart_dir: Path) -> helmignore.IgnoreRules:
    path = chart_dir / helmignore.IGNORE_FILE
    # Helm reads the file as text; bytes that are not UTF-8 cannot match a path either way.
    lines = path.read_text(errors="replace").splitlines() if path.is_file() else []
    return helmignore.parse_rules(lines, source=str(path))


def _walk(chart_dir: Path, rules: helmignore.IgnoreRules) -> Iterator[tuple[str, Path]]:
    """(relative path, file) for every file the rules keep; directories are pruned whole."""
    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(chart_dir, followlinks=True):
        info = os.stat(root)
        if (info.st_dev, info.st_ino) in seen:
            dirs.clear()
            continue
        seen.add((info.st_dev, info.st_ino))
        prefix = Path(root).relative_to(chart_dir).as_posix()
        prefix = "" if prefix == "." else f"{prefix}/"
        dirs[:] = [d for d in dirs if not rules.ignores(prefix + d, is_dir=True)]
        for name in files:
            path = Path(root, name)
            if path.is_file() and not rules.ignores(prefix + name, is_dir=False):
                yield prefix + name, path


def _tar_entry(name: str, data: bytes, executable: bool) -> tarfile.TarInfo:
    entry = tarfile.TarInfo(name)
    entry.size = len(data)
    entry.mtime = FIXED_MTIME
    entry.mode = 0o755 if executable else 0o644
    entry.uid = entry.gid = 0
    entry.uname = entry.gname = ""
    return entry


def _archive(top: str, files: list[tuple[str, Path]]) -> bytes:
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for relative, path in sorted(files):
            data = path.read_bytes()
            executable = bool(path.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
            tar.addfile(_tar_entry(f"{top}/{relative}", data, executable), io.BytesIO(data))
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=FIXED_MTIME) as gz:
        gz.write(tar_bytes.getvalue())
    return compressed.getvalue()


def build_archive(chart_dir: Path) -> ChartArchive:
    """Validate the chart in `chart_dir` and build its archive in memory."""
    chart_file = chart_dir / chart.CHART_FILE
    if not chart_file.is_file():
        raise InvalidInputError(f"no {chart.CHART_FILE} in this directory", obj=str(chart_dir))
    metadata = chart.parse(chart_file.read_bytes(), source=str(chart_file))
    files = list(_walk(chart_dir, _ignore_rules(chart_dir)))
    if chart.CHART_FILE not in {relative for relative, _ in files}:
        raise InvalidInputError(f".helmignore excludes {chart.CHART_FILE}", obj=str(chart_dir))
    return ChartArchive(metadata=metadata, data=_archive(metadata.name, files))


def package(chart_dir: Path, out_dir: Path) -> tuple[Path, ChartArchive]:
    """Write `NAME-VERSION.tgz` of `chart_dir` into `out_dir`; return its path and the archive."""
    archive = build_archive(chart_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / archive.filename
    target.write_bytes(archive.data)
    return target, archive


def _chart_yaml_bytes(
    data: bytes, source: str, error: type[InvalidInputError] = InvalidInputError
) -> bytes:
    """The Chart.yaml at the top of a chart archive (`TOP/Chart.yaml`), read as a capped stream."""
    with untar.open_capped(data, source, error=error) as tar:
        for member in tar:
            _, _, rest = member.name.removeprefix("./").partition("/")
            if rest != chart.CHART_FILE or not member.isfile():
                continue
            if member.size > MAX_CHART_YAML_BYTES:
                raise error(
                    f"{member.name} is over the {size_text(MAX_CHART_YAML_BYTES)} cap", obj=source
                )
            extracted = tar.extractfile(member)
            if extracted is not None:
                return extracted.read()
    raise error(f"not a chart archive: no NAME/{chart.CHART_FILE} inside", obj=source)


def read_chart_yaml(data: bytes, *, source: str) -> Mapping[str, Any]:
    """The Chart.yaml mapping inside a pulled archive, checked only for a name and a version;
    RegistryAnswerError when there is none.

    Lenient on purpose: charts pushed by others (Helm 2 `apiVersion: v1`, a `v`-prefixed
    version) are still charts to pull.
    """
    raw = _chart_yaml_bytes(data, source, RegistryAnswerError)
    try:
        document = yamlload.load(raw, f"{source}: {chart.CHART_FILE}", unique_keys=False)
    except InvalidInputError as err:
        raise RegistryAnswerError(err.message, obj=err.obj, field=err.field) from None
    if not isinstance(document, dict) or not all(
        _is_file_name_part(document.get(key)) for key in ("name", "version")
    ):
        raise RegistryAnswerError(
            f"{chart.CHART_FILE} lacks a name or a version usable in a file name", obj=source
        )
    return document


def _is_file_name_part(value: Any) -> bool:
    # Pulled names become file and directory names: no separators, no "." or "..".
    return (
        isinstance(value, str)
        and value not in ("", ".", "..")
        and "/" not in value
        and "\\" not in value
    )


def load_archive(data: bytes, *, source: str) -> ChartArchive:
    """A chart archive to push: its Chart.yaml is validated like a chart directory's."""
    raw = _chart_yaml_bytes(data, source)
    metadata = chart.parse(raw, source=f"{source}: {chart.CHART_FILE}")
    return ChartArchive(metadata=metadata, data=data)
