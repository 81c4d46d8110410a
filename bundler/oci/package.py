"""Chart archives: deterministic `NAME-VERSION.tgz` packaging, and reading a chart back from one.

The same chart directory always gives the same bytes, hence the same digest: entries are the
regular files that `.helmignore` keeps, sorted by path, under `NAME/`, with a fixed modification
time, owner root:root without names, and mode 0644 (0755 when the source file is executable). The
gzip header carries no timestamp and no file name (Python's gzip writes the current time unless
told otherwise). Symbolic links are followed, as Helm does, and a link cycle is cut.

Before packaging or pushing, a chart is checked as `helm package` checks it: every dependency its
Chart.yaml lists (a v1 chart: its requirements.yaml) must be a chart in `charts/`, a directory or a
`.tgz` whose Chart.yaml has that name, and every other entry of `charts/` must be a chart too
(Helm skips names starting with `_` or `.` and `.prov` files). `--version`/`--app-version`
overrides rewrite the archive's Chart.yaml, as `helm package` does.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler import yamldump, yamlload
from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import chart, helmignore, untar
from bundler.oci.chart import ChartMetadata
from bundler.oci.limits import MAX_CHART_YAML_BYTES, size_text

FIXED_MTIME = 0
CHARTS_DIR = "charts"


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


@dataclass(frozen=True)
class _Entry:
    """One file of a chart: its path below the chart's top directory, bytes and mode."""

    relative: str
    data: bytes = field(repr=False)
    executable: bool = False


def _archive(top: str, entries: list[_Entry]) -> bytes:
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in sorted(entries, key=lambda e: e.relative):
            info = _tar_entry(f"{top}/{entry.relative}", entry.data, entry.executable)
            tar.addfile(info, io.BytesIO(entry.data))
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=FIXED_MTIME) as gz:
        gz.write(tar_bytes.getvalue())
    return compressed.getvalue()


def _directory_entries(chart_dir: Path) -> list[_Entry]:
    entries = []
    for relative, path in _walk(chart_dir, _ignore_rules(chart_dir)):
        executable = bool(path.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
        entries.append(_Entry(relative, path.read_bytes(), executable))
    return entries


def _archive_entries(data: bytes, source: str) -> tuple[str, list[_Entry]]:
    """The top directory and the files of a chart archive (read within the decompression cap)."""
    top: str | None = None
    entries = []
    with untar.open_capped(data, source) as tar:
        for member in tar:
            first, _, rest = member.name.removeprefix("./").partition("/")
            if not member.isfile() or not rest:
                continue
            if top is not None and first != top:
                raise InvalidInputError(
                    f"not a chart archive: entries under both {top}/ and {first}/", obj=source
                )
            top = first
            extracted = tar.extractfile(member)
            content = extracted.read() if extracted is not None else b""
            entries.append(_Entry(rest, content, bool(member.mode & 0o111)))
    if top is None:
        raise InvalidInputError(
            f"not a chart archive: no NAME/{chart.CHART_FILE} inside", obj=source
        )
    return top, entries


def _subchart_names(entries: list[_Entry], source: str) -> set[str]:
    """The names of the charts in `charts/`, read as Helm's loader reads them; InvalidInputError
    for an entry of `charts/` that is not a chart, which Helm refuses to load."""
    groups: dict[str, list[_Entry]] = {}
    for entry in entries:
        rest = entry.relative.removeprefix(f"{CHARTS_DIR}/")
        if rest == entry.relative or entry.relative.endswith(".prov"):
            continue
        groups.setdefault(rest.split("/", 1)[0], []).append(entry)
    names = set()
    for name, files in sorted(groups.items()):
        if name.startswith(("_", ".")):
            continue
        where = f"{source}: {CHARTS_DIR}/{name}"
        if name.endswith(".tgz"):
            raw = _chart_yaml_bytes(files[0].data, where)
        else:
            found = [f for f in files if f.relative == f"{CHARTS_DIR}/{name}/{chart.CHART_FILE}"]
            if not found:
                raise InvalidInputError(
                    f"not a chart: no {chart.CHART_FILE} (Helm refuses to load a chart with "
                    f"such an entry in {CHARTS_DIR}/)",
                    obj=where,
                )
            raw = found[0].data
        document = yamlload.load(raw, f"{where}: {chart.CHART_FILE}", unique_keys=False)
        subchart = document.get("name") if isinstance(document, dict) else None
        if not isinstance(subchart, str) or not subchart:
            raise InvalidInputError(f"its {chart.CHART_FILE} has no name", obj=where)
        names.add(subchart)
    return names


def _declared_dependencies(
    metadata: ChartMetadata, entries: list[_Entry], source: str
) -> tuple[str, list[chart.Dependency]]:
    """Where the chart lists its dependencies (Chart.yaml, or a v1 chart's requirements.yaml)
    and what it lists."""
    if metadata.api_version != chart.API_VERSION_V1:
        return chart.CHART_FILE, metadata.dependencies
    found = [e for e in entries if e.relative == chart.REQUIREMENTS_FILE]
    if not found:
        return chart.REQUIREMENTS_FILE, []
    where = f"{source}: {chart.REQUIREMENTS_FILE}"
    document = yamlload.load(found[0].data, where)
    if document is None:
        return chart.REQUIREMENTS_FILE, []
    if not isinstance(document, dict):
        raise InvalidInputError("must be a YAML mapping", obj=where)
    listed = document.get("dependencies") or []
    if not isinstance(listed, list):
        raise InvalidInputError("must be a list", obj=where, field="dependencies")
    return chart.REQUIREMENTS_FILE, chart.dependencies_of(listed, source=where)


def check_dependencies(metadata: ChartMetadata, entries: list[_Entry], source: str) -> None:
    """InvalidInputError naming the dependencies missing from charts/, as `helm package` says."""
    listed_in, dependencies = _declared_dependencies(metadata, entries, source)
    present = _subchart_names(entries, source)
    missing = [d.name for d in dependencies if d.name not in present]
    if missing:
        raise InvalidInputError(
            f"found in {listed_in}, but missing in {CHARTS_DIR}/ directory: "
            f"{', '.join(missing)} (run `helm dependency build` on the chart first)",
            obj=source,
            field="dependencies",
        )


def _finish(
    metadata: ChartMetadata, entries: list[_Entry], overrides: chart.Overrides, source: str
) -> ChartArchive:
    check_dependencies(metadata, entries, source)
    if overrides:
        metadata = chart.with_overrides(metadata, overrides, source=source)
        text = yamldump.dump(dict(metadata.document)).encode()
        entries = [e for e in entries if e.relative != chart.CHART_FILE]
        entries.append(_Entry(chart.CHART_FILE, text))
    return ChartArchive(metadata=metadata, data=_archive(metadata.name, entries))


def build_archive(chart_dir: Path, overrides: chart.Overrides | None = None) -> ChartArchive:
    """Validate the chart in `chart_dir` and build its archive in memory."""
    chart_file = chart_dir / chart.CHART_FILE
    if not chart_file.is_file():
        raise InvalidInputError(f"no {chart.CHART_FILE} in this directory", obj=str(chart_dir))
    metadata = chart.parse(chart_file.read_bytes(), source=str(chart_file))
    entries = _directory_entries(chart_dir)
    if chart.CHART_FILE not in {entry.relative for entry in entries}:
        raise InvalidInputError(f".helmignore excludes {chart.CHART_FILE}", obj=str(chart_dir))
    return _finish(metadata, entries, overrides or chart.Overrides(), str(chart_dir))


def package(
    chart_dir: Path, out_dir: Path, overrides: chart.Overrides | None = None
) -> tuple[Path, ChartArchive]:
    """Write `NAME-VERSION.tgz` of `chart_dir` into `out_dir`; return its path and the archive."""
    archive = build_archive(chart_dir, overrides)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / archive.filename
    target.write_bytes(archive.data)
    return target, archive


def archive_files(data: bytes, *, source: str) -> dict[str, bytes]:
    """The files of a chart archive by their path below its top directory (read within the
    decompression cap)."""
    return {entry.relative: entry.data for entry in _archive_entries(data, source)[1]}


def with_file(data: bytes, relative: str, content: bytes, *, source: str) -> bytes:
    """The chart archive `data` with the file `relative` (below its top directory) holding
    `content`, packaged as bundler packages."""
    top, entries = _archive_entries(data, source)
    kept = [e for e in entries if e.relative != relative]
    return _archive(top, [*kept, _Entry(relative, content)])


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


def load_archive(
    data: bytes, *, source: str, overrides: chart.Overrides | None = None
) -> ChartArchive:
    """A chart archive to push: its Chart.yaml is validated like a chart directory's and its
    dependencies checked; with `overrides` it is packaged again with the new Chart.yaml."""
    raw = _chart_yaml_bytes(data, source)
    metadata = chart.parse(raw, source=f"{source}: {chart.CHART_FILE}")
    _, entries = _archive_entries(data, source)
    if overrides:
        return _finish(metadata, entries, overrides, source)
    check_dependencies(metadata, entries, source)
    return ChartArchive(metadata=metadata, data=data)
