"""Reading input files: `-f PATH` arguments (files or directories of YAML) into API objects.

Used by the offline commands (render, explain) and the simulator. Everything that can be wrong with
the input raises InvalidInputError naming `FILE:LINE` (the offending field's line where the YAML
writes it, else the document's first line) and the field. `-` reads standard input.

A directory is read recursively, in sorted order, except what is not input: hidden directories
(`.git`, `.venv`, ...) and virtual environments (a `pyvenv.cfg`) are never entered, and a Helm
chart's directory (a `Chart.yaml` marks one: its templates are not YAML yet) is skipped whole with
one notice. Documents of kinds bundler does not own (a Deployment, a values file, a `fleet.yaml`,
a YAML list) are skipped, each with one notice in `World.notices` (a Fleet file's says how to
import it); `strict=True` makes skipped documents errors instead. Inputs that hold no object
bundler reads at all are an error (NothingToReadError, exit 1) saying what was read.
"""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler import yamlload
from bundler.api.bootstrap import BootstrapConfig
from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.documents import (
    Document,
    describe_kind,
    is_bundler_document,
    parse_object,
    split_documents,
)
from bundler.capi.render_inputs import import_documents, is_capi_input
from bundler.core.capi_import import ImportMode
from bundler.core.selectors import validate_selector
from bundler.core.validation import validate_bundle, validate_cluster, validate_metadata
from bundler.errors import InvalidInputError, NothingToReadError

YAML_SUFFIXES = (".yaml", ".yml")
STDIN = "-"
STDIN_SOURCE = "<stdin>"
CHART_FILE = "Chart.yaml"
# A directory holding this file is a Python virtual environment, whatever its name.
VENV_MARKER = "pyvenv.cfg"
FLEET_FILES = ("fleet.yaml", "fleet.yml")
FLEET_GROUP = "fleet.cattle.io"
_IMPORT_HINT = (
    "`bundler import fleet DIR [--gitrepo GITREPO.yaml]` turns a Fleet repository into Bundles"
)
# How many files the error for inputs without any object names.
_NAMED_FILES = 5


@dataclass
class World:
    """Everything the inputs declare, in input order; `secrets` and `config_maps` are the v1
    Secret and ConfigMap documents as written (checked as the API server would, namespace
    defaulted)."""

    bundles: list[Bundle] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    groups: list[ClusterGroup] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)
    config_maps: list[dict[str, Any]] = field(default_factory=list)
    bootstrap_configs: list[BootstrapConfig] = field(default_factory=list)
    # one line per document skipped because bundler does not own its kind, per chart directory
    notices: list[str] = field(default_factory=list)

    def stored(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The input Secret or ConfigMap (`kind`) `namespace/name` as the API server stores it (a
        Secret's `stringData` folded into `data`), or None when the inputs do not hold it."""
        found = self.secrets if kind == "Secret" else self.config_maps
        for obj in found:
            meta = obj["metadata"]
            if (meta["namespace"], meta["name"]) != (namespace, name):
                continue
            stored = {k: v for k, v in obj.items() if k != "stringData"}
            folded = {
                k: base64.b64encode(v.encode()).decode()
                for k, v in (obj.get("stringData") or {}).items()
            }
            if folded:
                stored["data"] = {**(obj.get("data") or {}), **folded}
            return stored
        return None

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """The decoded data of the input Secret `namespace/name` (`stringData` winning, as the API
        server folds it in), or None when the inputs do not hold it."""
        for secret in self.secrets:
            meta = secret["metadata"]
            if (meta["namespace"], meta["name"]) == (namespace, name):
                data = secret.get("data") or {}
                decoded = {
                    k: base64.b64decode(v).decode("utf-8", "replace") for k, v in data.items()
                }
                return {**decoded, **(secret.get("stringData") or {})}
        return None


@dataclass
class InputFiles:
    """The files `-f` paths name, and one notice per chart directory skipped."""

    files: list[Path] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def _is_skipped_directory(path: Path) -> bool:
    return path.name.startswith(".") or (path / VENV_MARKER).is_file()


def _chart_notice(path: Path) -> str:
    return (
        f"notice: {path}: skipped a Helm chart directory ({CHART_FILE}): bundler deploys charts "
        "from a repository or registry (`bundler chart push` publishes it)"
    )


def _directory_files(root: Path, found: InputFiles, *, skip_charts: bool) -> None:
    if skip_charts and (root / CHART_FILE).is_file():
        found.notices.append(_chart_notice(root))
        return
    for current, dirs, files in os.walk(root, followlinks=True):
        here = Path(current)
        kept = []
        for name in sorted(dirs):
            child = here / name
            if _is_skipped_directory(child):
                continue
            if skip_charts and (child / CHART_FILE).is_file():
                found.notices.append(_chart_notice(child))
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = here / name
            if path.suffix in YAML_SUFFIXES and path.is_file():
                found.files.append(path)


def walk_inputs(paths: Iterable[str], *, skip_charts: bool = True) -> InputFiles:
    """The YAML files named, directories expanded recursively in sorted order, leaving out hidden
    directories, virtual environments and (unless `skip_charts` is False) chart directories.

    A directory without any YAML file (nor chart) is an error: it is a wrong path more often
    than not.
    """
    found = InputFiles()
    for raw in paths:
        path = Path(raw)
        if raw == STDIN:
            found.files.append(path)
        elif path.is_dir():
            before = (len(found.files), len(found.notices))
            _directory_files(path, found, skip_charts=skip_charts)
            if (len(found.files), len(found.notices)) == before:
                raise InvalidInputError("no .yaml or .yml file in this directory", obj=raw)
        elif path.is_file():
            found.files.append(path)
        else:
            raise InvalidInputError("no such file or directory", obj=raw)
    return found


def input_files(paths: Iterable[str], *, skip_charts: bool = True) -> list[Path]:
    """The files of `walk_inputs`, without its notices."""
    return walk_inputs(paths, skip_charts=skip_charts).files


def read_documents(paths: Sequence[str], notices: list[str] | None = None) -> list[Document]:
    """The documents of the inputs; with `notices`, chart directories and documents that are no
    mapping are skipped with a line each there (else a document that is no mapping is an
    error)."""
    return _read(paths, notices)[1]


def _read(paths: Sequence[str], notices: list[str] | None) -> tuple[list[str], list[Document]]:
    """The sources read and their documents."""
    walked = walk_inputs(paths)
    if notices is not None:
        notices.extend(walked.notices)
    sources: list[str] = []
    docs: list[Document] = []
    for path in walked.files:
        source = STDIN_SOURCE if str(path) == STDIN else str(path)
        sources.append(source)
        docs.extend(split_documents(read_input_text(path), source, notices))
    return sources, docs


def _read_bytes(path: Path) -> bytes:
    # one byte over the limit tells it is over: a larger input is never read whole
    if str(path) == STDIN:
        return sys.stdin.buffer.read(yamlload.MAX_INPUT_BYTES + 1)
    with path.open("rb") as stream:
        return stream.read(yamlload.MAX_INPUT_BYTES + 1)


def read_input_text(path: Path) -> str:
    """The UTF-8 text of an input file (`-`: standard input), at most MAX_INPUT_BYTES."""
    try:
        data = _read_bytes(path)
    except OSError as err:
        raise InvalidInputError(f"cannot read: {err.strerror or err}", obj=str(path)) from None
    except MemoryError:
        raise InvalidInputError("too large to read: out of memory", obj=str(path)) from None
    if len(data) > yamlload.MAX_INPUT_BYTES:
        raise InvalidInputError(
            f"larger than {yamlload.MAX_INPUT_BYTES >> 20} MiB, the limit for one input",
            obj=str(path),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidInputError(
            f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", obj=str(path)
        ) from None


def load_world(
    paths: Sequence[str],
    capi_import: ImportMode = ImportMode.LABELED,
    *,
    strict: bool = False,
    require_objects: bool = True,
) -> World:
    """The objects the inputs declare; Cluster API Clusters (and their kubeconfig Secrets) become
    Clusters and class ClusterGroups exactly as the manager's importer would make them, and every
    Secret is kept as it is. Documents of other kinds are skipped with a notice
    (strict: refused). NothingToReadError when the inputs hold no object bundler reads, unless
    `require_objects` is False (an empty side of a diff)."""
    world = World()
    seen: dict[tuple[str, str, str], str] = {}
    capi_docs: list[Document] = []
    walked: list[str] = []
    sources, docs = _read(paths, walked)
    if strict and walked:
        raise InvalidInputError(f"{walked[0].removeprefix('notice: ')} (--strict refuses it)")
    world.notices.extend(walked)
    read_anything = False
    for doc in docs:
        if is_capi_input(doc.body):
            capi_docs.append(doc)
            read_anything = True
            continue
        if not is_bundler_document(doc.body):
            _skip(world, doc, strict=strict)
            continue
        read_anything = True
        obj = parse_object(doc)
        assert isinstance(obj, Bundle | Cluster | ClusterGroup | BootstrapConfig)
        ident = (obj.kind, obj.metadata.namespace or "", obj.metadata.name)
        if ident in seen:
            raise InvalidInputError(
                f"{obj.kind} {ident[1]}/{ident[2]} is also defined at {seen[ident]}",
                obj=doc.at("metadata.name"),
                field="metadata.name",
            )
        seen[ident] = doc.where
        _add(world, obj, doc)
    if require_objects and not read_anything:
        raise NothingToReadError(
            _nothing_read(paths, sources, docs, world.notices), notices=world.notices
        )
    imported = import_documents(
        capi_docs, mode=capi_import, clusters=world.clusters, groups=world.groups
    )
    world.clusters.extend(imported.clusters)
    world.groups.extend(imported.groups)
    world.secrets.extend(imported.secrets)
    world.config_maps.extend(imported.config_maps)
    return world


def _nothing_read(
    paths: Sequence[str], sources: list[str], docs: list[Document], notices: list[str]
) -> str:
    """What the inputs held, for the error saying none of it is bundler's."""
    named = ", ".join(sources[:_NAMED_FILES])
    if len(sources) > _NAMED_FILES:
        named += f" and {len(sources) - _NAMED_FILES} more"
    charts = sum(": skipped a Helm chart directory" in line for line in notices)
    parts = [f"{_count(len(sources), 'file')} ({named})" if sources else "no YAML file"]
    if docs or len(notices) > charts:
        parts.append(f"{_count(len(notices) - charts, 'document')} skipped (see the notices)")
    elif sources:
        parts.append("no document in them")
    if charts:
        parts.append(f"{_count(charts, 'chart directory', 'chart directories')} skipped")
    return (
        f"no Bundle, Cluster, ClusterGroup or Cluster API Cluster in {', '.join(paths)}: read "
        + "; ".join(parts)
    )


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _skip(world: World, doc: Document, *, strict: bool) -> None:
    what = describe_kind(doc.body)
    if strict:
        raise InvalidInputError(
            f"{what} is not a kind bundler reads (without --strict it is skipped)",
            obj=doc.at("kind"),
            field="kind",
        )
    world.notices.append(f"notice: {doc.where}: skipped {what}: {_why_skipped(doc)}")


def _why_skipped(doc: Document) -> str:
    """The end of a skip notice: why, and for Fleet's files how to import them."""
    api_version = doc.body.get("apiVersion")
    group = api_version.partition("/")[0] if isinstance(api_version, str) else ""
    if Path(doc.source).name in FLEET_FILES:
        return f"a Fleet bundle's options, not a Kubernetes object; {_IMPORT_HINT}"
    if group == FLEET_GROUP:
        return f"a kind of Fleet's; {_IMPORT_HINT}"
    return "not a kind bundler reads"


def _add(
    world: World, obj: Bundle | Cluster | ClusterGroup | BootstrapConfig, doc: Document
) -> None:
    try:
        _validate(obj, doc)
    except InvalidInputError as err:
        raise doc.error(err) from None
    if isinstance(obj, Bundle):
        world.bundles.append(obj)
    elif isinstance(obj, Cluster):
        world.clusters.append(obj)
    elif isinstance(obj, BootstrapConfig):
        world.bootstrap_configs.append(obj)
    else:
        world.groups.append(obj)


def _validate(obj: Bundle | Cluster | ClusterGroup | BootstrapConfig, doc: Document) -> None:
    validate_metadata(obj.metadata, obj=doc.where)
    if isinstance(obj, Bundle):
        validate_bundle(obj)
    elif isinstance(obj, Cluster):
        validate_cluster(obj, obj=doc.where)
    elif isinstance(obj, ClusterGroup):
        validate_selector(obj.spec.selector, field="spec.selector")
